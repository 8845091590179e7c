"""Derived facts: values computed once from a host's parsed facts for every
reader (rules, remedies, the wizard, charts, the cluster page, similarity),
the "combiner" stage of the pipeline::

    parse -> assemble -> derive -> rules -> findings -> similar cases -> session

Modules here take ``collectors.facts`` objects and return plain values or
small dataclasses. They never import ``triage`` (rules import them, not the
other way round) and never touch the database.

- ``citing``: which host, artifact and line a fact was read from (evidence).
- ``memory``: configured static huge pages.
- ``fleet``: a host's fleet profile, what the fleet rules and the cluster page
  compare across the members of a cluster (stored per snapshot).
"""
