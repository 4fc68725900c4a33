"""Views for notebooks: Graphviz diagrams drawn from the state tables (and, later, widgets)."""

from .diagrams import DIAGRAMS, state_diagram, to_dot

__all__ = ["DIAGRAMS", "state_diagram", "to_dot"]
