"""coordinator_kit: a teaching kit for Kafka's coordination machinery.

The core (clock, timeline, runtime, logs, trace) is pure Python and deterministic on virtual
time; Jupyter, Graphviz and Spark are used only by the `viz` and `spark` layers.
"""

__version__ = "0.1.0"
