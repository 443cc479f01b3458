public import NFCFiles

/// The private-folder rule lives in ``/NFCFiles`` (below this module, with every other file
/// rule); these names keep working for code that finds it here.
public typealias PrivateFolder = NFCFiles.PrivateFolder
public typealias PrivateFolderError = NFCFiles.PrivateFolderError
