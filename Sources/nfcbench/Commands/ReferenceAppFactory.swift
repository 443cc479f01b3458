import ReaderSession
import ReaderSessionConformance
import ReferenceApps

/// The reference apps (`Examples/ReferenceApps`) as the harness creates them: one
/// controller per run, its delays on the run's virtual clock.
enum ReferenceAppFactory {
    /// A factory for the app with these habits (none: the reference app).
    static func make(_ habits: ScanHabits, design: ReferenceApps.Design = .scanButton) -> ConformanceHarness.AppFactory
    {
        { env in
            let after: TagScanController.Scheduler = { delay, queue, work in env.asyncAfter(delay, on: queue, work) }
            switch design {
            case .scanButton:
                return ReferenceAppUnderTest(TagScanController(system: env.system, habits: habits, after: after))
            case .waypointTrail:
                let trail = WaypointTrail(system: env.system, habits: habits, after: after)
                return ReferenceAppUnderTest(trail.scanner, trail: trail)
            }
        }
    }
}

/// Adapts a reference app's controller to the harness's protocol (the user's three actions).
private final class ReferenceAppUnderTest: ConformanceApp {
    let controller: TagScanController
    let trail: WaypointTrail?
    init(_ controller: TagScanController, trail: WaypointTrail? = nil) {
        self.controller = controller
        self.trail = trail
    }
    func continueUserActivity(_ userActivity: NSUserActivity) { trail?.continueUserActivity(userActivity) }
    func scanTapped(_ request: ScanRequest) {
        controller.scanTapped(
            TagScanController.ScanPlan(
                tagCount: request.tagCount, tagObjects: request.readWrite, tagSession: request.session == .tag,
                commands: request.commands, selectIdentifiers: request.selectIdentifiers, readAll: request.readAll,
                commandInterval: request.commandInterval))
    }
    func didEnterBackground() { controller.didEnterBackground() }
    func willEnterForeground() { controller.willEnterForeground() }
}
