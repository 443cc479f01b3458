import ReaderSessionConformance
import ReferenceApps

/// The reference apps (`Examples/ReferenceApps`) as the harness creates them: one
/// controller per run, its delays on the run's virtual clock.
enum ReferenceAppFactory {
    /// A factory for the app with these habits (none: the reference app).
    static func make(_ habits: ScanHabits) -> ConformanceHarness.AppFactory {
        { env in
            ReferenceAppUnderTest(
                TagScanController(
                    system: env.system, habits: habits,
                    after: { delay, queue, work in env.asyncAfter(delay, on: queue, work) }))
        }
    }
}

/// Adapts a reference app's controller to the harness's protocol (the user's three actions).
private final class ReferenceAppUnderTest: ConformanceApp {
    let controller: TagScanController
    init(_ controller: TagScanController) { self.controller = controller }
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
