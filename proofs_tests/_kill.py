"""Kill-and-resume tests' one helper: a child process killed with SIGKILL at a chosen point of its progress."""
import signal
import subprocess
import sys
import time


def kill_when(argv_code: str, env: dict, watch, target: int, timeout: float = 120, args=()) -> bool:
    """Start ``python -c argv_code *args`` with ``env``; SIGKILL it as soon as ``watch()`` reaches ``target``.
    True if it was killed, False if it finished first (it must then exit 0)."""
    p = subprocess.Popen([sys.executable, "-c", argv_code, *args], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    t0 = time.time()
    try:
        while p.poll() is None and time.time() - t0 < timeout:
            if watch() >= target:
                p.send_signal(signal.SIGKILL)
                p.wait()
                return True
            time.sleep(0.002)
        assert p.wait(timeout=timeout) == 0, p.stderr.read().decode()
        return False
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stderr.close()
