"""``service.scaleout``: several edge halls and one centre over NATS JetStream (the issue
"Beyond one machine").  Nothing here is imported by a club's hall: ``run`` imports the edge
only with ``--central``.  :mod:`~service.scaleout.log_wire` is the format on the broker,
:mod:`~service.scaleout.edge` the hall's link to the centre (the log forwarder, the status
heartbeat, the admin answers), :mod:`~service.scaleout.aggregator` the centre's in-order
reader with its store (:mod:`~service.scaleout.central_store`)."""
