/// `blockbook`, `esplora`: block explorers' answers (written once ProviderHTTP can answer from memory).
enum ExplorerTargets {
    static let blockbook = FuzzTarget("blockbook", run: { _ in })
    static let esplora = FuzzTarget("esplora", run: { _ in })
}
