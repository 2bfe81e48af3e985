"""What servops hands the on-call stack: the Prometheus alert pack generated from the rule catalog.

Why its own folder: Prometheus, Alertmanager and CI speak their own formats (rules files, the
PrometheusRule resource); this folder turns the catalog's alerts (rules/alerts.py) into them and
nothing else, so the catalog stays the one source of every threshold and page.
"""
