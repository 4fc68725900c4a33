"""Helpers behind the notebooks: one module per lesson, each with its seeded runs, the small
views its cells print, and the check functions of its exercises.

The notebooks stay thin: a cell calls one of these functions, and the functions are tested like
the rest of the kit. Import the module of the lesson you need, e.g.
``from coordinator_kit.lessons import heartbeats``; this package imports nothing on its own.
"""
