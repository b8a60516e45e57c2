"""Text formats read in more than one package: server-sent events and YAML files of models.

A leaf: it imports nothing of ours (only PyYAML and pydantic), so ``gateway``, ``tiers``,
``audit`` and ``engine`` may all use it without an edge between them.

- ``sse``         the one incremental reader of ``text/event-stream`` bodies
- ``yaml_model``  the one loader of YAML files into pydantic models (duplicate keys refused;
                  every error names the file and the line)
"""

__all__: list[str] = []
