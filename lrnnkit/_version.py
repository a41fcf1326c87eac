"""The package's version, in a module of its own so that any module may read it without importing the root
package (whose ``__init__`` imports most of lrnnkit)."""
__version__ = "0.1.0"
