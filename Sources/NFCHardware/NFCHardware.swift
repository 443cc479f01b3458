// NFCHardware: see README.md for what lives here.
