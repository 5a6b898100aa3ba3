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
exclude_patterns = ["_build", "_extra", "**.ipynb_checkpoints"]
html_theme = "alabaster"
html_theme_options = {"page_width": "96%", "body_max_width": "none", "sidebar_width": "220px"}
html_title = "vrlib"
html_extra_path = ["_extra"]  # the committed figures, at figures/<profile>/ in the site
html_show_sourcelink = False
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]
