"""What the frozen studio contains beyond what PyInstaller finds by itself, and what it leaves out.

PyVista imports VTK lazily (`importlib.import_module("vtkmodules." + name)` in
pyvista/_vtk.py), and VTK's compiled modules import `vtkmodules.util.*` from C,
so PyInstaller's static analysis sees none of them: they are listed here as
hidden imports. The studio's own sub-commands are imported lazily too. Ray,
test tools and Tk are left out: the desktop app submits to a farm over HTTP.
"""
from __future__ import annotations

# Rendering back ends that VTK registers by import side effect (object factories):
# without them a render window is a generic stub and nothing draws.
VTK_FACTORIES = [
    "vtkmodules.vtkRenderingOpenGL2",
    "vtkmodules.vtkInteractionStyle",
    "vtkmodules.vtkRenderingFreeType",
    "vtkmodules.vtkRenderingContextOpenGL2",
    "vtkmodules.vtkRenderingVolumeOpenGL2",
    "vtkmodules.vtkRenderingGL2PSOpenGL2",
    "vtkmodules.vtkRenderingMatplotlib",    # math text in labels, loaded with pyvista's text actors
    "vtkmodules.vtkPythonContext2D",
]

# Packages that load shared libraries by path (ctypes, dlopen) at import, which
# PyInstaller's dependency scan cannot see: lib3mf (imported by build123d), glfw
# (imported by mujoco), MuJoCo's plugin folder.
BINARY_PACKAGES = ["lib3mf", "glfw", "mujoco"]

# What pyvista 0.49 and pyvistaqt 0.13 load on first use (the keys of
# pyvista._vtk's module tables), kept literal so a build without pyvista
# importable still lists them; vtk_modules() adds any the installed pyvista names.
VTK_LAZY = [
    "vtkmodules.vtkCommonColor", "vtkmodules.vtkCommonComputationalGeometry",
    "vtkmodules.vtkCommonCore", "vtkmodules.vtkCommonDataModel",
    "vtkmodules.vtkCommonExecutionModel", "vtkmodules.vtkCommonMath",
    "vtkmodules.vtkCommonMisc", "vtkmodules.vtkCommonSystem",
    "vtkmodules.vtkCommonTransforms", "vtkmodules.vtkFiltersCore",
    "vtkmodules.vtkFiltersExtraction", "vtkmodules.vtkFiltersGeneral",
    "vtkmodules.vtkFiltersGeometry", "vtkmodules.vtkFiltersHybrid",
    "vtkmodules.vtkFiltersModeling", "vtkmodules.vtkFiltersPoints",
    "vtkmodules.vtkFiltersSources", "vtkmodules.vtkFiltersTexture",
    "vtkmodules.vtkIOCore", "vtkmodules.vtkIOGeometry", "vtkmodules.vtkIOImage",
    "vtkmodules.vtkIOLegacy", "vtkmodules.vtkIOPLY", "vtkmodules.vtkIOXML",
    "vtkmodules.vtkImagingCore", "vtkmodules.vtkImagingSources",
    "vtkmodules.vtkInteractionWidgets", "vtkmodules.vtkRenderingAnnotation",
    "vtkmodules.vtkRenderingContext2D", "vtkmodules.vtkRenderingCore",
    "vtkmodules.vtkRenderingLabel", "vtkmodules.vtkRenderingUI",
    "vtkmodules.vtkRenderingVolume", "vtkmodules.vtkChartsCore",
    "vtkmodules.vtkViewsContext2D", "vtkmodules.vtkRenderingSceneGraph",
]

# Pure-Python helpers VTK's compiled modules import from C (data_model, execution_model ...).
VTK_UTIL = [
    "vtkmodules.util", "vtkmodules.util.data_model", "vtkmodules.util.execution_model",
    "vtkmodules.util.numpy_support", "vtkmodules.util.vtkConstants",
    "vtkmodules.util.vtkAlgorithm", "vtkmodules.util.misc", "vtkmodules.util.colors",
    "vtkmodules.numpy_interface", "vtkmodules.numpy_interface.dataset_adapter",
]

# File readers and parallel filters pyvista can load but the studio never uses
# (its meshes come from build123d and trimesh): left out to keep the app lean.
VTK_UNUSED_PREFIXES = ("vtkmodules.vtkIO", "vtkmodules.vtkDomainsChemistry", "vtkmodules.vtkFiltersParallel")

EXCLUDES = [
    "ray", "tkinter", "_tkinter", "turtle", "idlelib", "pytest", "_pytest", "pytestqt",
    "PyInstaller", "jedi", "sympy", "IPython.kernel", "ipykernel", "notebook",
    "matplotlib.backends.backend_tkagg", "matplotlib.backends.backend_tkcairo",
    "matplotlib.backends.backend_gtk3agg", "matplotlib.backends.backend_gtk4agg",
    "matplotlib.backends.backend_wxagg", "matplotlib.backends.backend_webagg",
    "matplotlib.backends.backend_nbagg", "matplotlib.tests", "numpy.tests", "scipy.tests",
    "vtkmodules.web", "vtkmodules.tk", "vtkmodules.gtk", "vtkmodules.wx", "vtkmodules.test",
    "vtkmodules.qt",   # VTK's own Qt widget; the studio uses pyvistaqt
    "vtk", "vtkmodules.all",   # the all-in-one VTK; pyvista imports it only for type checkers
    "PyQt5", "PyQt6", "PySide2", "trame", "trame_vtk",
    "studio.blender",  # runs inside Blender's Python; shipped as source files instead
]


def vtk_modules() -> list[str]:
    """Every VTK module the frozen app may import at run time, in a stable order."""
    names = list(dict.fromkeys(VTK_FACTORIES + VTK_LAZY + VTK_UTIL))
    try:
        from pyvista import _vtk as lazy
        tables = {}
        for attr in ("_CORE_MODULES", "_PLOTTING_MODULES", "_OPENGL_MODULES"):
            tables.update(getattr(lazy, attr, {}))
        for m in sorted(tables):
            name = f"vtkmodules.{m}"
            if name not in names and not name.startswith(VTK_UNUSED_PREFIXES):
                names.append(name)
    except ImportError:
        pass
    return names


def studio_modules() -> list[str]:
    """The studio's own modules, all of them (sub-commands and panels are imported lazily)."""
    import pkgutil

    import studio
    out = ["studio"]
    for info in pkgutil.walk_packages(studio.__path__, "studio."):
        if not info.name.startswith("studio.blender"):
            out.append(info.name)
    return out
