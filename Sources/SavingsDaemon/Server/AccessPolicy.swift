import Foundation
import Synchronization

/// Who may talk to the daemon (SPEC 9): its own user, root, `allow_uids` and members of
/// `allow_groups` fully; members of `read_only_groups` for read methods only; nobody else.
public struct AccessPolicy: Sendable, Equatable {
    public enum Grant: String, Sendable, Equatable {
        case full
        case readOnly = "read_only"
        case denied
    }

    /// The peer of a connection: read directly by SO_PEERCRED, so its stored properties keep
    /// the layout of `struct ucred` (pid_t, uid_t, gid_t).
    public struct Peer: Sendable, Equatable, CustomStringConvertible {
        public var pid: Int32
        public var uid: UInt32
        public var gid: UInt32
        public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
    }

    public var allowUIDs: Set<UInt32> = []
    public var allowGroups: [String] = []
    public var readOnlyGroups: [String] = []
    /// Connections served at once; at this many, newcomers are accepted one at a time and parked
    /// until a connection closes, or one of a uid over its fair share is closed for a uid below
    /// its own (`Admission`).
    public var maxConnections: Int = 64
    /// One uid's share of `maxConnections` (nil: half); its connections beyond it wait, parked
    /// unread, until one of its own closes.
    public var maxConnectionsPerUID: Int?
    /// The listen backlog (the socket unit's `Backlog=` under systemd) and the bound on parked
    /// connections: beyond as many as the backlog holds, a newcomer is answered `busy`.
    public var backlog: Int = 2048
    public var perUIDLimit: Int { maxConnectionsPerUID ?? max(1, maxConnections / 2) }
    /// Seconds a connection may stay silent (no request in flight, no subscription) before it is closed.
    public var idleTimeout: Int = 300

    public init() {}

    /// The decision for `peer`; `groupsOf` gives the peer's groups (primary and supplementary).
    /// A uid named outright (the daemon's, root, `allow_uids`) has full access; among groups,
    /// a read-only group wins over an allowed one, so a socket's group can admit everyone and
    /// `read_only_groups` still restricts those in it (SPEC 9: they may call read methods only).
    public func grant(_ peer: Peer, daemonUID: UInt32, groupsOf: (Peer) -> Set<UInt32>) -> Grant {
        if peer.uid == daemonUID || peer.uid == 0 || allowUIDs.contains(peer.uid) { return .full }
        let groups = groupsOf(peer)
        if !readOnlyGroups.isEmpty, !groups.isDisjoint(with: Self.gids(readOnlyGroups)) { return .readOnly }
        if !allowGroups.isEmpty, !groups.isDisjoint(with: Self.gids(allowGroups)) { return .full }
        return .denied
    }

    static func gids(_ names: [String]) -> Set<UInt32> {
        groupDatabase.withLock { _ in Set(names.compactMap { name in getgrnam(name).map { UInt32($0.pointee.gr_gid) } }) }
    }

    private static let groupDatabase = Mutex(())

    /// The peer's primary group, the supplementary groups of its process (as the kernel
    /// reported them at connect, `reported`; else from /proc, which a sandboxed daemon may not
    /// see), and the groups naming its user in the group database.
    static func groups(of peer: Peer, reported: [UInt32]? = nil) -> Set<UInt32> {
        var groups: Set<UInt32> = [peer.gid]
        if let reported {
            groups.formUnion(reported)
        } else if let status = try? String(contentsOfFile: "/proc/\(peer.pid)/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Groups:") }) {
            for field in line.dropFirst("Groups:".count).split(separator: " ") {
                if let gid = UInt32(field.trimmingCharacters(in: .whitespaces)) { groups.insert(gid) }
            }
        }
        // getpwuid and getgrent share static state: one reader at a time.
        groupDatabase.withLock { _ in
            guard let user = getpwuid(peer.uid).map({ String(cString: $0.pointee.pw_name) }) else { return }
            setgrent()
            while let entry = getgrent() {
                var member = entry.pointee.gr_mem
                while let name = member?.pointee {
                    if String(cString: name) == user { groups.insert(UInt32(entry.pointee.gr_gid)) }
                    member = member?.advanced(by: 1)
                }
            }
            endgrent()
        }
        return groups
    }
}

/// The answer to `SO_PEERGROUPS`: the supplementary groups the peer had when it connected, read
/// with the same socket-option call as its credentials. The kernel keeps them sorted, and the
/// buffer beyond them stays zeroed; a peer with more than 64 groups makes the call fail
/// (the caller then falls back to /proc).
struct PeerGroups: Sendable {
    var gids: InlineArray<64, UInt32>

    /// The groups: the sorted run from the start, up to where the zeroed tail begins. A lone
    /// leading 0 (the root group and nothing else) cannot be told from an empty list and is
    /// left out; the group database still names root's members.
    var list: [UInt32] {
        var result: [UInt32] = []
        for index in gids.indices {
            let gid = gids[index]
            if let last = result.last {
                guard gid > last else { break }
            } else if gid == 0 {
                guard index + 1 < gids.count, gids[index + 1] != 0 else { break }
            }
            result.append(gid)
        }
        return result
    }
}
