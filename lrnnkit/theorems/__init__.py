"""The statement registry (one module per paper: paper_000.py .. paper_004.py). See registry.py."""
from .registry import CheckResult, Statement, all_statements, get, register, run_check, statement

__all__ = ["CheckResult", "Statement", "all_statements", "get", "register", "run_check", "statement"]
