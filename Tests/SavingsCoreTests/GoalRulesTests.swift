import Foundation
import Testing
@testable import SavingsCore

@Suite struct GoalRulesTests {
    let today = try! CalendarDate(parsing: "2026-11-22", field: "today")

    func field(of body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as DomainError {
            return error.details["field"]
        } catch {
            return "unexpected"
        }
    }

    @Test func validGoalGetsDefaultsAndNormalisation() throws {
        let goal = try NewGoal(name: "  Emergency Fund ", currency: "eur", targetAmount: "5000", deadline: "2027-06-30",
                               startDate: nil, notes: "", today: today)
        #expect(goal.name == "Emergency Fund")
        #expect(goal.currency.code == "EUR")
        #expect(goal.startDate == today)
        #expect(goal.notes == nil)
    }

    @Test func eachInvalidFieldIsNamed() {
        #expect(field { _ = try NewGoal(name: " ", currency: "EUR", targetAmount: "1", deadline: "2027-01-01", startDate: nil, notes: nil, today: today) } == "name")
        #expect(field { _ = try NewGoal(name: String(repeating: "x", count: 201), currency: "EUR", targetAmount: "1", deadline: "2027-01-01", startDate: nil, notes: nil, today: today) } == "name")
        #expect(field { _ = try NewGoal(name: "A", currency: "E", targetAmount: "1", deadline: "2027-01-01", startDate: nil, notes: nil, today: today) } == "currency")
        #expect(field { _ = try NewGoal(name: "A", currency: "EUR", targetAmount: "0", deadline: "2027-01-01", startDate: nil, notes: nil, today: today) } == "target_amount")
        #expect(field { _ = try NewGoal(name: "A", currency: "EUR", targetAmount: "-5", deadline: "2027-01-01", startDate: nil, notes: nil, today: today) } == "target_amount")
        #expect(field { _ = try NewGoal(name: "A", currency: "EUR", targetAmount: "1.001", deadline: "2027-01-01", startDate: nil, notes: nil, today: today) } == "target_amount")
        #expect(field { _ = try NewGoal(name: "A", currency: "EUR", targetAmount: "1", deadline: "2027-02-30", startDate: nil, notes: nil, today: today) } == "deadline")
        #expect(field { _ = try NewGoal(name: "A", currency: "EUR", targetAmount: "1", deadline: "2026-01-01", startDate: nil, notes: nil, today: today) } == "deadline")
        #expect(field { _ = try NewGoal(name: "A\u{7}", currency: "EUR", targetAmount: "1", deadline: "2027-01-01", startDate: nil, notes: nil, today: today) } == "name")
    }

    @Test func cryptoTargetsKeepEightDecimals() throws {
        let goal = try NewGoal(name: "Stack", currency: "BTC", targetAmount: "0.12345678", deadline: "2027-01-01",
                               startDate: nil, notes: nil, today: today)
        #expect(Amount.format(goal.targetAmount, scale: goal.currency.minorUnits) == "0.12345678")
    }

    @Test func changesReapplyEveryRule() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let new = try NewGoal(name: "Bike", currency: "BTC", targetAmount: "0.123", deadline: "2027-01-01",
                              startDate: nil, notes: "n", today: today)
        let goal = Goal(id: UUID(), name: new.name, currency: new.currency, targetAmount: new.targetAmount,
                        deadline: new.deadline, startDate: new.startDate, archived: false, notes: new.notes,
                        createdAt: now, updatedAt: now)
        // Switching to JPY would silently drop decimals of the target: refused.
        #expect(field { _ = try GoalChanges(currency: "JPY").applied(to: goal, at: now) } == "target_amount")
        let later = now.addingTimeInterval(60)
        let changed = try GoalChanges(currency: "JPY", targetAmount: "150000", notes: "").applied(to: goal, at: later)
        #expect(changed.currency.code == "JPY")
        #expect(changed.notes == nil)
        #expect(changed.updatedAt == later)
        let unchanged = try GoalChanges(name: "Bike").applied(to: goal, at: later)
        #expect(unchanged.updatedAt == now)
    }

    @Test func nameKeyIsCaseInsensitive() {
        #expect(Goal.nameKey(" Émergency ") == Goal.nameKey("éMERGENCY"))
    }
}

@Suite struct DefaultPathsTests {
    @Test func userModeUsesXDG() {
        let paths = DefaultPaths.resolve(environment: ["HOME": "/home/a", "XDG_RUNTIME_DIR": "/run/user/1000"], system: false, uid: 1000)
        #expect(paths.mode == .user)
        #expect(paths.database == "/home/a/.local/share/savingsd/savings.db")
        #expect(paths.socket == "/run/user/1000/savingsd/savingsd.sock")
        #expect(paths.config == "/home/a/.config/savingsd/savingsd.toml")
    }

    @Test func userModeWithoutRuntimeDirUsesPrivateTmp() {
        let paths = DefaultPaths.resolve(environment: ["HOME": "/root", "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c"], system: false, uid: 0)
        #expect(paths.socket == "/tmp/savingsd-0/savingsd.sock")
        #expect(paths.database == "/d/savingsd/savings.db")
        #expect(paths.config == "/c/savingsd/savingsd.toml")
    }

    @Test func systemModeAndSystemdDirectories() {
        #expect(DefaultPaths.resolve(environment: [:], system: true, uid: 0) == .system)
        let systemd = DefaultPaths.resolve(
            environment: ["STATE_DIRECTORY": "/var/lib/savingsd:/var/lib/other", "RUNTIME_DIRECTORY": "/run/savingsd",
                          "CONFIGURATION_DIRECTORY": "/etc/savingsd"],
            system: false, uid: 0)
        #expect(systemd.mode == .systemd)
        #expect(systemd.database == "/var/lib/savingsd/savings.db")
        #expect(systemd.socket == "/run/savingsd/savingsd.sock")
        #expect(systemd.config == "/etc/savingsd/savingsd.toml")
    }
}
