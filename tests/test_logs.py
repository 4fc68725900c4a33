"""Kafka's log4j layout and the template catalogue (`coordinator_kit/logs/catalogue.py`)."""

from __future__ import annotations

import io
import logging
import re
import string

import pytest

from coordinator_kit.logs import TEMPLATES, Log4jFormatter, format_log4j, format_timestamp
from coordinator_kit.runtime.sandbox import RuntimeSandbox

LOG4J = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR) "
                   r"(.*) \(([\w.$]+)\)$")


def test_layout_matches_kafkas_default_pattern():
    line = format_log4j(1_234, "INFO", "[GroupCoordinator id=1] hello", "a.b.C")
    assert line == "[2025-03-03 09:00:01,234] INFO [GroupCoordinator id=1] hello (a.b.C)"
    assert format_timestamp(86_400_000 + 5) == "2025-03-04 09:00:00,005"


def test_every_line_a_scenario_writes_has_kafkas_layout_and_a_known_template():
    sb = RuntimeSandbox(append_linger_ms=10)
    sb.start()
    sb.put("a", "1")
    sb.expire_after("a", 100)
    sb.partition().stall_replica(2)
    sb.run_for(40_000)
    sb.move_leader(0, 1)
    sb.run_for(100)
    events = [e for e in sb.trace if e.message is not None]
    assert len(events) > 20
    for e in events:
        m = LOG4J.match(e.line())
        assert m, e.line()
        tpl = TEMPLATES[e.template_id]
        assert m.group(4) == tpl.logger and m.group(2) == tpl.level and e.kind == tpl.event


@pytest.mark.parametrize("tpl", list(TEMPLATES.values()), ids=lambda t: t.id)
def test_templates_render_and_name_their_fields(tpl):
    fields = {name for _, name, _, _ in string.Formatter().parse(tpl.text) if name}
    rendered = tpl.render({f: f"<{f}>" for f in fields})
    for f in fields:
        assert f"<{f}>" in rendered
    with pytest.raises(KeyError, match=tpl.id) if fields else _nothing():
        tpl.render({})


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_lines_go_through_python_logging_on_virtual_time():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(Log4jFormatter())
    logger = logging.getLogger("org.apache.kafka.coordinator.common.runtime.CoordinatorRuntime")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        sb = RuntimeSandbox()
        sb.run_for(250)
        sb.start()
        sb.run_for(10)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    assert stream.getvalue().splitlines()[0] == (
        "[2025-03-03 09:00:00,250] INFO [GroupCoordinator id=0] Scheduling loading of metadata "
        "from __consumer_offsets-0 with epoch 0 "
        "(org.apache.kafka.coordinator.common.runtime.CoordinatorRuntime)")
