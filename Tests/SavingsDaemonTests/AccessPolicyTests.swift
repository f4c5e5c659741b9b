import Testing
@testable import SavingsDaemon

@Suite struct AccessPolicyTests {
    let stranger = AccessPolicy.Peer(pid: 1, uid: 4242, gid: 4242)

    func policy(allow: [String] = [], readOnly: [String] = [], uids: Set<UInt32> = []) -> AccessPolicy {
        var policy = AccessPolicy()
        policy.allowGroups = allow
        policy.readOnlyGroups = readOnly
        policy.allowUIDs = uids
        return policy
    }

    @Test func rootTheDaemonAndNamedUIDsHaveFullAccess() {
        let nobodyElse = policy()
        #expect(nobodyElse.grant(AccessPolicy.Peer(pid: 1, uid: 0, gid: 0), daemonUID: 500) { _ in [] } == .full)
        #expect(nobodyElse.grant(AccessPolicy.Peer(pid: 1, uid: 500, gid: 500), daemonUID: 500) { _ in [] } == .full)
        #expect(nobodyElse.grant(stranger, daemonUID: 500) { _ in [100] } == .denied)
        #expect(policy(readOnly: ["users"], uids: [4242]).grant(stranger, daemonUID: 500) { _ in [100] } == .full)
    }

    /// The shared system socket admits one group; `read_only_groups` restricts those in it too.
    @Test func aReadOnlyGroupWinsOverAnAllowedOne() {
        let shared = policy(allow: ["users"], readOnly: ["daemon"])
        #expect(shared.grant(stranger, daemonUID: 500) { _ in [100] } == .full)
        #expect(shared.grant(stranger, daemonUID: 500) { _ in [100, 1] } == .readOnly)
        #expect(shared.grant(stranger, daemonUID: 500) { _ in [1] } == .readOnly)
        #expect(shared.grant(stranger, daemonUID: 500) { _ in [4242] } == .denied)
    }

    /// Groups reported by the kernel count even when /proc cannot be read (a sandboxed daemon).
    @Test func reportedGroupsAreUsedWithoutProc() {
        let gone = AccessPolicy.Peer(pid: Int32.max, uid: 4242, gid: 4242)
        #expect(AccessPolicy.groups(of: gone, reported: [100, 995]).isSuperset(of: [4242, 100, 995]))
        #expect(!AccessPolicy.groups(of: gone).contains(100))
    }

    @Test func peerGroupsEndWhereTheZeroedTailBegins() {
        func list(_ gids: [UInt32]) -> [UInt32] {
            var buffer = PeerGroups(gids: InlineArray(repeating: 0))
            for (index, gid) in gids.enumerated() { buffer.gids[index] = gid }
            return buffer.list
        }
        #expect(list([]) == [])
        #expect(list([100, 995]) == [100, 995])
        #expect(list([0, 100]) == [0, 100], "root's group, then others")
        #expect(list([0]) == [], "a lone root group reads as none")
        let full = (1...64).map(UInt32.init)
        #expect(list(full) == full)
    }
}
