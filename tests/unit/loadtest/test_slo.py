"""`--slo` parsing: units, several terms, and a one-line error for anything else."""

import pytest

from loadtest.errors import LoadTestError
from loadtest.slo import parse_slos


def test_units_convert_to_seconds():
    slos = parse_slos("ttft_p99=2s,itl_p99=100ms,e2e_p50=1500000us,tpot_p90=0.05")
    assert [(s.key, s.bound_s) for s in slos] == [
        ("ttft_p99", 2.0),
        ("itl_p99", pytest.approx(0.1)),
        ("e2e_p50", pytest.approx(1.5)),
        ("tpot_p90", 0.05),
    ]


def test_empty_slo_means_no_objectives():
    assert parse_slos(None) == [] and parse_slos("") == []


@pytest.mark.parametrize("bad", ["ttft=2s", "latency_p99=1s", "ttft_p99=fast", "ttft_p42=1s"])
def test_malformed_term_is_a_user_error_naming_it(bad):
    with pytest.raises(LoadTestError) as err:
        parse_slos(bad)
    assert bad in str(err.value) and err.value.user_facing
