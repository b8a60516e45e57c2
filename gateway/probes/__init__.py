"""Probes of the incident's shape, beyond the short isolation probe of ``gateway.probe``.

- ``settings``     the ``probes:`` block (``ProbeSettings``) with its ``ladder`` / ``prefix_cache``
- ``synthetic``    synthetic prompts of an exact length (the upstream's tokenizer) with markers
- ``plan``         rungs, the token cost and price stated up front, the budget guard
- ``ladder``       long-context ladder probe: one judged result per rung
- ``prefix_cache`` cross-tenant prefix-cache probe (cached tokens and time to first token)
- ``record``       audit events, Prometheus series, alarms, lowering the effective safe length
- ``safe_length``  the lowered safe lengths as each replica routes by them
- ``schedule``     the server's loop running them every interval

Nothing is re-exported here: ``gateway.probe`` imports ``settings`` while it loads, so this
package must stay import-free. Import from the modules.
"""

__all__: list[str] = []
