// HCEEvents: see README.md for what lives here.
