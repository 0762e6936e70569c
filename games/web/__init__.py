"""``solver serve``: an analysis board in the browser for Ünee and Ur, over the solved tables.

``app`` is the Starlette application (its JSON mirrors the CLI's ``--json`` answers), ``tables``
opens each table once and builds small missing ones in the background, ``cli`` is the command.
The page is plain HTML, CSS and JavaScript in ``static/``: no build step, nothing from the network.
"""
