public import NFCTags
public import ReaderFrontend
import ReaderSession

/// The harness's reader: an in-memory field (``/NFCTags/EmulatedField``) that the harness
/// fills and empties at virtual instants, behind the one reader frontend every device uses,
/// so sessions run the real discovery and the real NFC Forum reader procedures.
///
/// A conformance scenario's tags are in the field at absolute times across sessions (a tag
/// left on the reader is still there for the next session), and the harness must know when
/// a polling event has been taken by the session before it moves time on: the frontend's
/// streams hand events over one at a time and say when one is still on its way (``isIdle(ended:)``).
public final class ConformanceReader: Sendable {
    /// The device.
    public let field: EmulatedField
    /// The session runtime's backend.
    public let frontend: ReaderFrontend

    /// - Parameters:
    ///   - identifier: the reader's name (sessions lock it): `"sim:conformance"` by default.
    ///   - clock: the harness's virtual clock.
    ///   - pollingOwner: names the session whose `begin()` is starting to poll (polling
    ///     starts inside `begin()`, just after its `begin` trace record), so a stream can be
    ///     forgotten once its session is over: a cancelled consumer never asks again.
    public init(
        identifier: String = "sim:conformance", clock: any ReaderSessionClock,
        pollingOwner: @escaping @Sendable () -> UInt64? = { nil }
    ) {
        field = EmulatedField(name: identifier)
        frontend = ReaderFrontend(device: field, clock: clock, streamOwner: pollingOwner)
    }

    /// Presentation names in the field now, sorted.
    public var tagsInField: [String] { field.tagsInField }

    /// Events produced so far (detections and losses).
    public var eventCount: UInt64 { frontend.eventCount }

    /// True when no polling event is waiting for, or being taken by, a session that is
    /// still running (sessions in `ended` no longer take events).
    public func isIdle(ended: Set<UInt64> = []) -> Bool { frontend.isIdle(ended: ended) }

    /// Puts tags into the field together (one polling result). Throws the tag file's error
    /// when no emulation core can be made; a name already in the field stays as it is.
    /// A name presented again is the same tag (its memory as it left, its file's faults that
    /// fired spent: `hardware/tags/FORMAT.md`, Faults); `faults` are this presentation's own.
    /// `tag` names the tag file (default: the name).
    public func present(_ tags: [(name: String, file: TagFile, faults: [TagFault])], tagNames: [String]? = nil)
        throws(TagFileError)
    {
        var made: [(key: String, name: String, tag: EmulatedTag, faults: [TagFault])] = []
        for (i, t) in tags.enumerated() {
            let tag = tagNames.map { $0[i] } ?? t.name
            made.append((tag + "\u{1F}" + t.name, t.name, try EmulatedTag(file: t.file), t.faults))
        }
        field.present(made)
    }

    /// Takes presentation `name` out of the field (nothing when it is not there).
    public func remove(_ name: String) { field.remove([name]) }
}
