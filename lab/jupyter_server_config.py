# JupyterLab on the checkout, as make lab starts it (JUPYTER_CONFIG_PATH=lab): the server serves
# the checkout, the file browser opens on the chapters, and every kernel starts in the checkout's
# root, where the parameters' default paths (book/reference/standard.csv) lead, as in
# `jacbench notebook`. labconfig/ beside this file opens the chapters, notebooks/*.md, as
# notebooks through jupytext.
from pathlib import Path

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager

ROOT = Path(__file__).resolve().parents[1]


class KernelsAtTheRoot(AsyncMappingKernelManager):
    """Kernels that start in the checkout's root, whatever folder their notebook is in."""

    def cwd_for_path(self, path, **kwargs):
        return str(ROOT)


c = get_config()  # noqa: F821 - given by Jupyter when it reads this file
c.ServerApp.root_dir = str(ROOT)
c.ServerApp.kernel_manager_class = KernelsAtTheRoot
c.ContentsManager.preferred_dir = "notebooks"
