internal import CNFC
internal import CPCSC

/// Versions of the C libraries this build runs on, for `--version` and trace headers.
public enum NativeLibraries {
    /// libnfc's own version string at run time. Wraps `nfc_version()`.
    public static var libnfcVersion: String { String(cString: nfc_version()) }
    /// pcsc-lite's version as compiled in (`PCSCLITE_VERSION_NUMBER` from `<PCSC/pcsclite.h>`;
    /// pcsc-lite offers no run-time query).
    public static var pcscLiteVersion: String { PCSCLITE_VERSION_NUMBER }
}
