# Sphinx configuration of the project's static site (scripts/build_site.sh copies it into the staging folder).
project = "vrlib"
author = "vrlib contributors"
extensions = ["myst_nb"]
# The notebooks are shown as they were executed; building the site runs nothing.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "_extra", "_static", "**.ipynb_checkpoints"]
html_theme = "alabaster"
html_theme_options = {"page_width": "96%", "body_max_width": "none", "sidebar_width": "220px", "show_powered_by": False}
html_title = "vrlib"
html_extra_path = ["_extra"]  # the committed figures, at figures/<profile>/ in the site
html_static_path = ["_static"]  # MathJax (from the jupyter-server-mathjax package) and the site's CSS
html_css_files = ["vrlib.css"]  # long output lines wrap, wide tables scroll
html_show_sourcelink = False
html_show_sphinx = False
# MathJax 2 served from the site itself, so that formulas render offline: the package's combined
# TeX configuration, with the one web font it ships (STIX-Web) and no image fonts.
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processEscapes": True,
        "processClass": "tex2jax_process|mathjax_process|math|output_area",
    },
    "HTML-CSS": {"availableFonts": [], "preferredFont": None, "webFont": "STIX-Web", "imageFont": None},
    "showMathMenu": False,
    "messageStyle": "none",
}
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]
