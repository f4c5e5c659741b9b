// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "savingsd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "savingsd", targets: ["savingsd"]),
        .executable(name: "savingsctl", targets: ["savingsctl"]),
        .executable(name: "savings-web", targets: ["savings-web"]),
        .executable(name: "savings-bench", targets: ["savings-bench"]),
        .executable(name: "bench-echo", targets: ["bench-echo"]),
        .executable(name: "savings-fuzz", targets: ["savings-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        // The web view's HTTP server and templates (without swift-configuration, which it does not use).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // A download's chunks handed from the daemon's connection to the browser's with back
        // pressure (AsyncThrowingChannel); Hummingbird builds it already.
        .package(url: "https://github.com/apple/swift-async-algorithms.git", from: "1.1.4"),
    ],
    targets: [
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // Pure rules; swift-crypto for the SHA-256 of base58check addresses and keys, TOMLKit
        // for the import rules files.
        .target(
            name: "SavingsCore",
            dependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "TOMLKit", package: "TOMLKit")],
            swiftSettings: strict),
        .target(
            name: "SavingsStore",
            dependencies: ["SavingsCore", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift")],
            swiftSettings: strict
        ),
        .target(name: "SavingsRPC", dependencies: ["SavingsCore"], swiftSettings: strict),
        .target(
            name: "SavingsDaemon",
            dependencies: [
                "SavingsCore", "SavingsStore", "SavingsRPC", "CSystemd",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "savingsd",
            dependencies: ["SavingsDaemon", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),
        // Human output of savingsctl: tables, colour, amounts, the overview and the HTML report.
        .target(name: "SavingsCLI", dependencies: ["SavingsCore", "SavingsRPC"], swiftSettings: strict),
        // `savingsctl web`: the app's screens in a browser, served on loopback as the invoking user
        // by `savings-web`, which savingsctl runs (so savingsctl itself starts without an HTTP server).
        .executableTarget(name: "savings-web", dependencies: ["SavingsWeb"], swiftSettings: strict),
        .target(
            name: "SavingsWeb",
            dependencies: [
                "SavingsCore", "SavingsRPC", "SavingsCLI",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "savingsctl",
            dependencies: ["SavingsCLI", "SavingsRPC", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict,
            // A position-dependent executable: a short-lived client has no relocations to apply
            // at every start (about 40% of its page faults). The daemon stays position-independent.
            linkerSettings: [.unsafeFlags(["-Xclang-linker", "-no-pie"], .when(configuration: .release))]
        ),
        .executableTarget(
            name: "savings-bench",
            dependencies: [
                "SavingsCore", "SavingsRPC",
                // The upgrade figure's v11 copy takes its tables from the store's own migrations.
                "SavingsStore",
                // --help and the refusal of unknown arguments, as the other executables do.
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // The loopback block explorer of the chain-sync figures.
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // The SwiftNIO line echo of the one-CPU round trips decodes lines as savingsd does.
                .product(name: "NIOExtras", package: "swift-nio-extras"),
            ],
            swiftSettings: strict),
        // Fuzz targets over what comes from outside (make fuzz: libFuzzer; built plainly it replays the corpus, make test).
        .executableTarget(
            name: "savings-fuzz",
            dependencies: [
                "SavingsCore", "SavingsRPC", "SavingsStore", "SavingsDaemon", "SavingsWeb",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // The baseline line server the benchmarks compare savingsd's round trips with.
        .executableTarget(name: "bench-echo"),
        .testTarget(name: "SavingsCoreTests", dependencies: ["SavingsCore"], swiftSettings: strict),
        .testTarget(
            name: "SavingsStoreTests",
            dependencies: ["SavingsStore", .product(name: "GRDB", package: "GRDB.swift")],
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
        .testTarget(name: "SavingsRPCTests", dependencies: ["SavingsRPC"], swiftSettings: strict),
        .testTarget(name: "SavingsCLITests", dependencies: ["SavingsCLI"], exclude: ["Golden"], swiftSettings: strict),
        .testTarget(name: "SavingsWebTests", dependencies: ["SavingsWeb", "SavingsRPC", .product(name: "NIOCore", package: "swift-nio")],
                    swiftSettings: strict),
        .testTarget(
            name: "SavingsDaemonTests",
            dependencies: ["SavingsDaemon", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "AsyncHTTPClient", package: "async-http-client")],
            swiftSettings: strict),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "SavingsCore", "SavingsRPC",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // The linked services' stubs check signatures with the documented algorithms.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
