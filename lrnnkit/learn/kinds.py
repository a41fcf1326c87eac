"""The trainable LRNN layer kinds (issue 13), in a torch-free module so that the command line can list them
without importing torch (building the parser must stay fast)."""

LAYER_KINDS = ("diagonal", "deltanet", "deltaproduct", "block-diagonal", "bilinear", "fixed-point")
