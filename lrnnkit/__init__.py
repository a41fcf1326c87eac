"""lrnnkit."""
