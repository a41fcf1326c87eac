"""Symbol-indexed affine recurrences with a fused linear-argmax decoder: the layers of a compiled lrnnkit Model."""
