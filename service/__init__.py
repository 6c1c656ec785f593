"""Chess meaning on top of the driver: recognition, variants, arbiter, tables, web."""
