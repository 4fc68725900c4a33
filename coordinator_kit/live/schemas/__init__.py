"""Wire schemas kafka-python 3.0.12 does not ship, in the JSON form its codec reads.

They state the field layout of Kafka's messages (names, types, versions, nullability), which is
the protocol itself; `live.versions` builds codec classes from them.
"""
