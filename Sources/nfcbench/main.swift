print("nfcbench")
