"""nfcbench on labgrid: NFC readers on many hosts as labgrid places.

- ``nfcbench_labgrid.exporter``: labgrid's exporter plus ``NFCSerialPort`` (a PN532 through a
  low-latency ser2net) and ``PCSCDaemon`` (a pcscd socket offered while the place is held).
- ``nfcbench_labgrid.driver``: ``NFCBenchDriver`` for labgrid environments and pytest
  (``imports: [nfcbench_labgrid.driver]``).
- ``nfcbench_labgrid.cli``: ``nfcbench-lg -p PLACE -- ARGS`` and ``nfcbench-lg matrix``.

nfcbench itself knows nothing of labgrid: it gets a local pty (``pn532_uart:PATH``) or a
local pcscd socket (``PCSCLITE_CSOCK_NAME`` with ``pcsc:READER``).
"""

LABGRID_VERSION = "26.0.1"
