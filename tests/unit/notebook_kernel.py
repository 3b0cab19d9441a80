"""The skip marker for tests that execute a notebook: they need the lab's Jupyter kernel 'httplab'
(scripts/setup.sh registers it)."""
import pytest


def kernel_available() -> bool:
    try:
        from jupyter_client.kernelspec import KernelSpecManager
        return "httplab" in KernelSpecManager().find_kernel_specs()
    except Exception:
        return False


needs_kernel = pytest.mark.skipif(not kernel_available(), reason="kernel 'httplab' not registered")
