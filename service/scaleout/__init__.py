"""``service.scaleout``: several edge halls and one centre (the issue "Beyond one machine")."""
