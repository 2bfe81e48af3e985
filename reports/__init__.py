"""Self-contained HTML reports for the on-call engineer.

reports owns the Jinja2 templates and the server-side SVG charts that turn triage, ramp, advise,
demo, tune and prediction JSON into one HTML file with no external URL, readable offline for
years. It renders what it is given and computes no findings of its own.
"""
