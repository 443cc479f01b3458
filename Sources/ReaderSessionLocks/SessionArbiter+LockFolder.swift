public import NFCTrace
public import ReaderSession

// The spellings of the arbiter's lock-file API from before the files moved out of ReaderSession
// (which is pure): with `import ReaderSessionLocks`, code written against them compiles unchanged.
extension SessionArbiter {
    /// An arbiter with a ``LockFolder`` in `lockDirectory` (`nil`: ``LockFolder/defaultDirectory()``),
    /// or (`fileLocks: false`) one of this process only.
    public convenience init(scope: Scope = .perReader, lockDirectory: String?, fileLocks: Bool = true) {
        self.init(scope: scope, crossProcessLocks: fileLocks ? LockFolder(directory: lockDirectory) : nil)
    }

    /// The lock folder of this arbiter's ``LockFolder``, or `nil` (in-process, or other locks).
    public var lockDirectory: String? { (crossProcessLocks as? LockFolder)?.directory }

    /// ``LockFolder/defaultDirectory()``.
    public static func defaultLockDirectory() -> String { LockFolder.defaultDirectory() }

    /// ``LockFolder/prepare(_:)``.
    @discardableResult
    public static func prepareLockDirectory(_ directory: String? = nil) throws(PrivateFolderError) -> String {
        try LockFolder.prepare(directory)
    }

    /// The heat file for `reader` beside its lock (``LockFolder/heatFilePath(forLockName:)``);
    /// `nil` without a lock folder.
    public func heatFilePath(for reader: String) -> String? {
        (crossProcessLocks as? LockFolder)?.heatFilePath(forLockName: lockName(for: reader))
    }

    /// ``LockFolder/removeHeldLockFilesBeforeExit()``.
    public static func removeHeldLockFilesBeforeExit() { LockFolder.removeHeldLockFilesBeforeExit() }

    static func isStillLinked(_ fd: Int32, _ path: String) -> Bool { LockFolder.isStillLinked(fd, path) }
}
