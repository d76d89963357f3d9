"""The run viewer in a real browser: Debian's headless Chromium, driven by selenium.

The report of the fixture run (tests/fixtures/view_run/, described in test_viewer.py) is
opened from disk and the assertions read the DOM: the rows, the filters and the search
box, an opened transcript with its tool calls and outputs, the first differing orm cell,
and transcript markup shown as text and never run. A screenshot goes to tests/artifacts/.
When the checkout holds a real run (test_vf_eval.py makes some), its report is opened too.

A verifiers 0.4 run (tests/fixtures/v1_runs/, described in test_viewer_v1.py) is opened with
its header, tokens and time per turn; the rollouts are sorted and filtered by error kind; and a
comparison of the reference policy's run with the null policy's is read and filtered.

Served on loopback (`websandbox view --serve`): a run whose file grows shows its new rollouts
without a reload, keeping the reader's filters, order and open rollout; the runs index lists
every run and opens one. A rollout's own link (#rollout=N, #task=ID) opens it, and the CSV and
JSONL exports download the rows shown, the same text `websandbox view --export` writes.

Without a browser these tests are skipped locally; under CI=true that is a failure.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from sandbox_env.viewer import load_run, write_report
from sandbox_env.viewer.export import table_row, to_csv
from sandbox_env.viewer.headless import BrowserMissing, console_errors, open_report, open_url, start_chromium
from sandbox_env.viewer.runs import EVALS, runs_under
from sandbox_env.viewer.serve import Site
from tests.viewer_kit import on_loopback

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "view_run"
V1_RUNS = Path(__file__).parent / "fixtures" / "v1_runs"
ARTIFACTS = Path(__file__).parent / "artifacts"


@pytest.fixture(scope="module")
def browser():
    try:
        driver = start_chromium(1280, 900)
    except BrowserMissing as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true and no headless browser: {exc}")
        pytest.skip(str(exc))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    run = load_run(FIXTURE)
    run.source = str(FIXTURE.relative_to(REPO))  # as a reader in the checkout would name it
    return write_report(run, tmp_path_factory.mktemp("view") / "report.html")


def css(driver, selector: str) -> list:
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


def tasks_shown(driver) -> list[str]:
    return [row.find_element("css selector", "td.task").text for row in css(driver, "tr.rollout")]


def choose(driver, select_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", select_id)).select_by_value(value)


def open_rollout(driver, task_id: str):
    row = next(r for r in css(driver, "tr.rollout") if r.find_element("css selector", "td.task").text == task_id)
    row.click()
    detail = row.find_element("xpath", "following-sibling::tr[1]")
    assert "detail" in detail.get_attribute("class")
    return row, detail


def test_every_rollout_has_a_row_and_each_family_a_line(browser, report):
    open_report(browser, report)
    assert len(css(browser, "tr.rollout")) == 8
    assert browser.find_element("id", "count").text == "8 rollouts"
    lines = [[td.text for td in tr.find_elements("css selector", "td")] for tr in css(browser, "#families tbody tr")]
    assert lines[0] == ["django", "2", "0", "0", "0 – 0", "0", "0", "1", "0"]
    assert lines[2][:4] == ["orm", "4", "0.25", "0.333"]
    low, high = (float(x) for x in lines[2][4].split(" – "))  # the 95 % interval holds the mean
    assert low <= 0.25 <= high and low < high
    assert lines[2][5:] == ["1", "0", "0", "1 (ModelError -> InternalServerError)"]
    assert lines[-1][:2] == ["all", "8"]
    assert "1 problem(s) reading this run" in browser.find_element("id", "run-meta").text
    assert console_errors(browser) == []


def test_filters_and_the_search_box_hide_the_rows_that_do_not_match(browser, report):
    open_report(browser, report)
    choose(browser, "f-family", "orm")
    assert tasks_shown(browser) == ["orm_adv_02", "orm_adv_01", "orm_adv_08", "orm_agg_03"]
    choose(browser, "f-score", "1")
    assert tasks_shown(browser) == ["orm_adv_02"]
    assert browser.find_element("id", "count").text == "1 of 8 rollouts"
    choose(browser, "f-family", "")
    choose(browser, "f-score", "")
    choose(browser, "f-scoring-error", "yes")
    assert tasks_shown(browser) == ["fastapi_enum_path"]
    choose(browser, "f-scoring-error", "")
    choose(browser, "f-tampered", "yes")
    assert tasks_shown(browser) == ["dj02"]
    choose(browser, "f-tampered", "")
    choose(browser, "f-task", "dj01")
    assert tasks_shown(browser) == ["dj01"]
    choose(browser, "f-task", "")
    browser.find_element("id", "f-search").send_keys("SameSite")
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 5).until(lambda d: len(css(d, "tr.rollout")) < 8)
    assert tasks_shown(browser) == ["fastapi_cookies"]


def test_an_opened_rollout_shows_its_tool_calls_outputs_answer_and_the_first_differing_orm_cell(browser, report):
    open_report(browser, report)
    row, detail = open_rollout(browser, "orm_adv_01")
    marked = detail.find_elements("css selector", "td.diff")
    assert [td.text for td in marked] == ['"Hollow Crown Rising"', '"Red River Ledger"']
    for td in marked:  # row 0, column 1 on both sides (the first cell is the row number)
        assert td.find_element("xpath", "..").find_elements("css selector", "td")[2] == td
        assert td.find_element("xpath", "../td[1]").text == "0"
    captions = [c.text for c in detail.find_elements("css selector", "table.rows caption")]
    assert captions == ["expected (9 rows)", "received (9 rows)"]
    calls = detail.find_elements("css selector", ".msg.assistant .call")
    assert "tool call: execute_code" in calls[0].text and "Book.objects.count()" in calls[0].text
    outputs = detail.find_elements("css selector", ".msg.tool")
    assert outputs[0].find_element("css selector", "pre").text == "60"
    assert "of execute_code" in outputs[0].text
    assert detail.find_element("css selector", ".msg.final pre").text == "I left result as a list of tuples."
    browser.set_window_size(1280, 1500)  # the page top (family table, filters) and the opened rollout
    browser.execute_script("window.scrollTo(0, 0)")
    ARTIFACTS.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "viewer.png"))
    row.click()
    assert css(browser, "tr.detail") == []


def test_django_and_fastapi_grades_name_the_failing_tests_and_requests(browser, report):
    open_report(browser, report)
    _, django = open_rollout(browser, "dj01")
    failing = django.find_element("css selector", ".failing")
    assert "6 failing test(s)" in failing.text
    assert "AssertionError: assert {'desk', 'lamp', 'retired'}" in failing.find_element("css selector", "pre.assertion").text
    _, fastapi = open_rollout(browser, "fastapi_cookies")
    item = fastapi.find_element("css selector", ".failing .test")
    assert item.find_element("css selector", ".request").text == "step 1: POST /login?user=alice"
    assert "got ['session_id=alice; Path=/; SameSite=lax']" in item.find_element("css selector", "ul.problems").text


def test_markup_in_a_transcript_is_shown_as_text_and_never_run(browser, report):
    open_report(browser, report)
    _, detail = open_rollout(browser, "dj02")
    assert "<img src=x onerror=" in detail.find_element("css selector", ".msg.tool pre").text
    assert detail.find_elements("css selector", "img") == []
    assert browser.execute_script("return window.pwned === undefined")
    assert "All tests pass now <b>for sure</b>." in detail.text
    assert console_errors(browser) == []


def test_a_real_run_of_this_checkout_opens_with_a_row_for_every_rollout(browser, tmp_path):
    runs = runs_under(REPO / EVALS)
    if not runs:
        pytest.skip("no saved run in this checkout (websandbox eval makes one)")
    run_dir = max(runs, key=lambda p: (p / "results.jsonl").stat().st_mtime)
    lines = [ln for ln in (run_dir / "results.jsonl").read_text().splitlines() if ln.strip()]
    report = write_report(load_run(run_dir), tmp_path / "report.html")
    open_report(browser, report)
    browser.execute_script(  # rows come a page at a time: ask for every page
        "let b; while ((b = document.querySelector('tr.more button'))) b.click();"
    )
    rows = css(browser, "tr.rollout")
    assert len(rows) == len(lines)
    first = json.loads(lines[0])
    assert rows[0].find_element("css selector", "td.task").text == (first.get("info") or {}).get("task_id")
    assert console_errors(browser) == []


@pytest.fixture(scope="module")
def v1_report(tmp_path_factory) -> Path:
    return write_report(load_run(V1_RUNS / "reference"), tmp_path_factory.mktemp("view") / "v1.html")


@pytest.fixture(scope="module")
def compare_report(tmp_path_factory) -> Path:
    run, base = load_run(V1_RUNS / "reference"), load_run(V1_RUNS / "null")
    return write_report(run, tmp_path_factory.mktemp("view") / "compare.html", base)


def test_a_v1_run_shows_its_header_and_the_tokens_and_time_of_every_turn(browser, v1_report):
    open_report(browser, v1_report)
    assert len(css(browser, "tr.rollout")) == 6
    meta = browser.find_element("id", "run-meta")
    assert "model reference" in meta.text and "(v1)" in meta.text
    assert meta.find_element("css selector", ".made.versions").text == "verifiers 0.4.0"
    assert meta.find_element("css selector", ".made.sampling").text == "sampling the server's defaults"
    row, detail = open_rollout(browser, "dj01")
    assert row.find_element("css selector", "td.tokens").text == "4,058"
    assert row.find_element("css selector", "td.turns").text == "3"
    usage = [u.text for u in detail.find_elements("css selector", ".msg.assistant .usage")]
    assert len(usage) == 3 and usage[0].startswith("turn 1 · 2,808 tokens in · 782 out · ")
    assert usage[2].endswith("finish: stop")
    assert "tool call: bash" in detail.text or "tool call: execute_code" in detail.text
    assert detail.find_elements("css selector", ".msg.tool pre")
    assert "3 turn(s) · 3,088 tokens in, 970 out" in detail.find_element("css selector", ".cost").text
    assert console_errors(browser) == []


def test_rollouts_sort_by_a_chosen_column_and_by_a_clicked_header(browser, v1_report):
    run = load_run(V1_RUNS / "reference")
    open_report(browser, v1_report)
    choose(browser, "f-sort", "tokens")
    by_tokens = sorted(run.rollouts, key=lambda r: -(r["tokens"]["input"] + r["tokens"]["output"]))
    assert tasks_shown(browser) == [r["task_id"] for r in by_tokens]
    browser.find_element("css selector", "table.rollouts th[data-sort='task']").click()
    assert tasks_shown(browser) == sorted(r["task_id"] for r in run.rollouts)
    choose(browser, "f-family", "django")
    assert tasks_shown(browser) == ["dj01", "dj04"], "a filter keeps the chosen order"


def test_scores_sort_highest_first_in_run_order_among_ties_and_errors_filter_by_kind(browser, report):
    open_report(browser, report)
    choose(browser, "f-sort", "score-down")
    rollouts = load_run(FIXTURE).rollouts
    scored = sorted((r for r in rollouts if r["reward"] is not None), key=lambda r: (-r["reward"], r["n"]))
    expected = [r["task_id"] for r in scored] + [r["task_id"] for r in rollouts if r["reward"] is None]
    assert tasks_shown(browser) == expected and expected[0] == "orm_adv_02"
    choose(browser, "f-errored", "kind:ModelError -> InternalServerError")
    assert tasks_shown(browser) == ["orm_agg_03"]


def test_an_ungraded_rollout_in_a_graded_run_says_it_stopped_on_an_error(browser, report):
    open_report(browser, report)
    _, detail = open_rollout(browser, "orm_agg_03")
    grade = detail.find_element("css selector", "section.grade")
    assert "Not graded: the rollout stopped on an error before grading." in grade.text
    assert "Error code: 502" in grade.find_element("css selector", "pre").text
    assert "This run saved no grade" not in grade.text


def test_a_run_that_saved_no_grade_at_all_says_how_to_make_one(browser, tmp_path):
    rows = [{"example_id": 0, "reward": 0.0, "info": {"task_id": "t1", "family": "orm"}, "completion": []}]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    open_report(browser, write_report(load_run(tmp_path), tmp_path / "report.html"))
    _, detail = open_rollout(browser, "t1")
    assert "This run saved no grade (make runs with `websandbox eval`" in detail.find_element("css selector", ".no-grade").text


def test_a_v1_run_that_saved_no_grade_gives_advice_of_its_own_stack(browser, tmp_path):
    """v1 has no -C grade: its runs keep the grade in each trace's info, so the advice says that instead."""
    run = load_run(V1_RUNS / "null")
    for rollout in run.rollouts:
        rollout["grade"] = None
    open_report(browser, write_report(run, tmp_path / "ungraded.html"))
    _, detail = open_rollout(browser, run.rollouts[0]["task_id"])
    text = detail.find_element("css selector", ".no-grade").text
    assert "-C grade" not in text and "a v1 run keeps it in each trace's info" in text
    assert console_errors(browser) == []


def test_a_comparison_shows_each_tasks_change_and_which_flipped(browser, compare_report):
    open_report(browser, compare_report)
    section = browser.find_element("id", "compare")
    assert section.is_displayed() and "model null" in section.find_element("tag name", "h2").text
    summary = browser.find_element("id", "compare-summary").text
    assert "6 tasks in both runs · 6 solved here only (gained) · 0 solved in the baseline only (lost)" in summary
    lines = [[td.text for td in tr.find_elements("css selector", "td")][:6] for tr in css(browser, "#compare-rows tr")]
    assert lines[0] == ["django", "dj01", "1", "0", "+1", "gained"] and len(lines) == 6
    assert "sampling the server's defaults" in browser.find_element("id", "base-meta").text
    choose(browser, "c-show", "lost")
    assert css(browser, "#compare-rows tr") == []
    choose(browser, "c-show", "gained")
    choose(browser, "c-sort", "family")
    assert [tr.find_element("css selector", "td.task").text for tr in css(browser, "#compare-rows tr")][:2] == ["dj01", "dj04"]
    css(browser, "#compare-rows tr")[1].click()
    assert tasks_shown(browser) == ["dj04"]
    ARTIFACTS.mkdir(exist_ok=True)
    browser.execute_script("window.scrollTo(0, 0)")
    assert browser.save_screenshot(str(ARTIFACTS / "viewer-compare.png"))
    assert console_errors(browser) == []


def test_a_run_without_tool_calls_and_with_cut_replies_says_so_above_its_table(browser, tmp_path):
    """The null policy's v1 run as if a real model server (that dropped the tools) had answered, with
    two replies of its first rollout cut at the token limit: both sentences of viewer/notes.py head
    the page, and the cut rollout's row carries its badge."""
    run = load_run(V1_RUNS / "null")
    run.meta["model"] = "some-model"
    first = run.rollouts[0]
    first["truncated"], first["cut_replies"] = True, 2
    open_report(browser, write_report(run, tmp_path / "notes.html"))
    notes = [n.text for n in css(browser, "#run-meta .note")]
    assert len(notes) == 2
    assert notes[0].startswith("no rollout called a tool (6 of 6 rollouts got a reply") and "websandbox check-server" in notes[0]
    assert notes[1].startswith('1 of 6 rollouts had a reply cut at the token limit (finish_reason "length", 2 replies in all)')
    badges = {row.find_element("css selector", "td.task").text: row.text for row in css(browser, "tr.rollout")}
    assert "cut ×2" in badges[first["task_id"]]
    assert sum("cut" in text for text in badges.values()) == 1
    assert console_errors(browser) == []


def test_a_run_that_called_its_tools_has_no_notes(browser, v1_report):
    open_report(browser, v1_report)
    assert css(browser, "#run-meta .note") == []


# -- served: a run followed as it grows, the runs index ------------------------------------------


@contextlib.contextmanager
def serving(driver, site: Site):
    """The site on a loopback port; at the end the browser leaves its pages before the server stops,
    so no poll of a stopped server is left in the console for the next test."""
    with on_loopback(site) as url:
        try:
            yield url
        finally:
            driver.get("about:blank")
            driver.get_log("browser")


def wait_until(driver, condition, timeout: float = 15.0):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.1).until(condition)


def test_a_served_run_shows_rollouts_that_arrive_keeping_filters_order_and_the_open_rollout(browser, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    with serving(browser, Site([tmp_path / "outputs"], run, every_ms=200)) as url:
        open_url(browser, url + "/")
        assert len(css(browser, "tr.rollout")) == 8
        choose(browser, "f-family", "orm")
        choose(browser, "f-sort", "task")
        _, detail = open_rollout(browser, "orm_adv_01")
        assert tasks_shown(browser) == ["orm_adv_01", "orm_adv_02", "orm_adv_08", "orm_agg_03"]
        browser.execute_script("window.sameDocument = true")
        first = json.loads((run / "results.jsonl").read_text().splitlines()[0])
        arrived = first | {"example_id": 8, "info": {"task_id": "orm_adv_05", "family": "orm"}}
        with (run / "results.jsonl").open("a") as f:
            f.write(json.dumps(arrived) + "\n")
        wait_until(browser, lambda d: d.find_element("id", "count").text == "5 of 9 rollouts")
        assert tasks_shown(browser) == ["orm_adv_01", "orm_adv_02", "orm_adv_05", "orm_adv_08", "orm_agg_03"]
        assert browser.execute_script("return window.sameDocument") is True, "no reload"
        assert browser.find_element("id", "f-family").get_attribute("value") == "orm"
        assert detail.is_displayed(), "the open rollout stays open, its detail the same element"
        row = next(r for r in css(browser, "tr.rollout") if "open" in r.get_attribute("class"))
        assert row.find_element("css selector", "td.task").text == "orm_adv_01"
        assert row.find_element("xpath", "following-sibling::tr[1]") == detail
        assert "9 rollouts" in browser.find_element("id", "live").text
        assert browser.find_element("id", "all-runs").is_displayed()
        lines = [[td.text for td in tr.find_elements("css selector", "td")] for tr in css(browser, "#families tbody tr")]
        assert lines[2][:2] == ["orm", "5"] and lines[-1][:2] == ["all", "9"]
        assert console_errors(browser) == []


def test_a_served_v1_run_shows_each_episode_appended_to_its_traces(browser, tmp_path):
    run = tmp_path / "outputs" / "websandbox--smoke--0a1b2c3d"
    shutil.copytree(V1_RUNS / "smoke", run)
    with serving(browser, Site([tmp_path / "outputs"], run, every_ms=200)) as url:
        open_url(browser, url + "/")
        assert tasks_shown(browser) == [r["task_id"] for r in load_run(run).rollouts]
        episode = (V1_RUNS / "reference" / "traces.jsonl").read_text().splitlines()[0]
        with (run / "traces.jsonl").open("a") as f:
            f.write(episode + "\n")
        wait_until(browser, lambda d: len(css(d, "tr.rollout")) == 3)
        assert browser.find_element("id", "count").text == "3 rollouts"
        assert console_errors(browser) == []


def test_the_runs_index_lists_every_run_and_opens_the_one_clicked(browser, tmp_path):
    outputs = tmp_path / "outputs"
    shutil.copytree(V1_RUNS / "reference", outputs / "v1" / "websandbox--reference--b742341b")
    shutil.copytree(V1_RUNS / "null", outputs / "websandbox--null--default--40202110")  # plain vf-eval
    shutil.copytree(FIXTURE, outputs / "evals" / "websandbox--script" / "1a2b3c4d")
    with serving(browser, Site([outputs], every_ms=200, index_every_ms=200)) as url:
        open_url(browser, url + "/")
        lines = {tr.find_element("css selector", "td.model").text: tr for tr in css(browser, "tr.run")}
        assert set(lines) == {"reference", "null", "script"}
        cells = [td.text for td in lines["script"].find_elements("css selector", "td")]
        assert cells[1:6] == ["script", "classic", "8", "0.219", "1"]
        shutil.copytree(V1_RUNS / "smoke", outputs / "websandbox--smoke--0a1b2c3d")  # a run that starts
        wait_until(browser, lambda d: len(css(d, "tr.run")) == 4)
        next(tr for tr in css(browser, "tr.run") if "null" in tr.text).find_element("css selector", "td.model a").click()
        wait_until(
            browser, lambda d: d.execute_script("return window.viewerReadyAt !== undefined && !!document.getElementById('rows')")
        )
        assert browser.title == "websandbox run: null" and len(css(browser, "tr.rollout")) == 6
        assert browser.current_url.startswith(url + "/run/")
        browser.find_element("id", "all-runs").click()
        wait_until(browser, lambda d: len(css(d, "tr.run")) == 4)
        assert console_errors(browser) == []


# -- a rollout's own link, and the exports ---------------------------------------------------------


def opened(driver) -> list[int]:
    return [int(r.get_attribute("data-n")) for r in css(driver, "tr.rollout.open")]


def test_a_rollouts_own_link_opens_it_and_opening_one_names_it_in_the_address(browser, report):
    open_report(browser, report, fragment="rollout=5")
    assert opened(browser) == [5]
    row = css(browser, "tr.rollout.open")[0]
    assert "detail" in row.find_element("xpath", "following-sibling::tr[1]").get_attribute("class")
    open_report(browser, report, fragment="task=dj02")
    assert opened(browser) == [6] and browser.execute_script("return location.hash") == "#rollout=6"
    open_report(browser, report)
    assert opened(browser) == [] and browser.execute_script("return location.hash") == ""
    open_rollout(browser, "dj01")
    assert browser.execute_script("return location.hash") == "#rollout=4"
    css(browser, "tr.rollout[data-n='4']")[0].click()  # closed: the address names no rollout
    assert browser.execute_script("return location.hash") == ""
    link = css(browser, "tr.rollout[data-n='2'] a.link")[0]
    assert link.get_attribute("href").endswith("#rollout=2")
    link.click()
    assert opened(browser) == [2] and browser.execute_script("return location.hash") == "#rollout=2"
    assert console_errors(browser) == []


def test_a_link_to_a_rollout_past_the_first_page_of_rows_opens_it(browser, tmp_path):
    rows = [json.loads(ln) for ln in (FIXTURE / "results.jsonl").read_text().splitlines() if ln.strip().endswith("}")]
    with (tmp_path / "results.jsonl").open("w") as f:
        for i in range(250):
            f.write(json.dumps(rows[i % len(rows)] | {"example_id": i}) + "\n")
    open_report(browser, write_report(load_run(tmp_path), tmp_path / "report.html"), fragment="rollout=230")
    assert opened(browser) == [230]
    top = browser.execute_script("return document.querySelector('tr.rollout.open').getBoundingClientRect().top")
    assert 0 <= top < 900, "scrolled to the opened rollout"


def download(driver, button: str, folder: Path) -> str:
    """Click an export button and return the text of the file the page made."""
    folder.mkdir()
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)})
    driver.find_element("id", button).click()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done = [p for p in folder.iterdir() if not p.name.endswith(".crdownload")]
        if done:
            return done[0].read_text(encoding="utf-8")
        time.sleep(0.05)
    raise AssertionError(f"no file was downloaded into {folder}")


def test_the_csv_and_jsonl_exports_hold_one_record_a_row_shown(browser, report, tmp_path):
    open_report(browser, report)
    choose(browser, "f-family", "orm")
    shown = tasks_shown(browser)
    text = download(browser, "export-csv", tmp_path / "csv")
    records = list(csv.reader(io.StringIO(text)))
    assert [r[3] for r in records[1:]] == shown and len(records) == 1 + 4
    orm = [r for r in load_run(FIXTURE).rollouts if r["family"] == "orm"]
    assert text == to_csv(orm), "the page writes what `websandbox view --export csv` writes"
    choose(browser, "f-family", "")
    choose(browser, "f-sort", "score-down")
    choose(browser, "f-errored", "no")
    shown = tasks_shown(browser)
    lines = download(browser, "export-jsonl", tmp_path / "jsonl").splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == shown and len(lines) == 7
    by_task = {r["task_id"]: table_row(r) for r in load_run(FIXTURE).rollouts}
    assert [json.loads(line) for line in lines] == [by_task[t] for t in shown]
    assert console_errors(browser) == []


def test_a_run_header_with_long_arguments_wraps_inside_the_page(browser, tmp_path):
    """A v1 run made over many task ids: its arguments line is one long JSON text with no space, which the
    header wraps instead of widening the page past the window."""
    run = load_run(V1_RUNS / "reference")
    run.meta["env_args"] = {"task_ids": [f"orm_generated_{i:04d}_with_a_long_name" for i in range(60)]}
    open_report(browser, write_report(run, tmp_path / "long-args.html"))
    page = browser.execute_script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert page[0] <= page[1], f"the page is {page[0]} px wide in a {page[1]} px window"
    args = browser.find_element("css selector", "#run-meta .made.args")
    assert "orm_generated_0059_with_a_long_name" in args.text
    assert console_errors(browser) == []


def test_a_rollout_played_again_after_an_empty_reply_says_so_on_its_row_and_when_opened(browser, tmp_path):
    run = load_run(V1_RUNS / "reference")
    first = run.rollouts[0]
    first["replayed_after"] = ["EmptyModelResponseError: Model returned no content and did not call any tools"]
    open_report(browser, write_report(run, tmp_path / "replayed.html"))
    notes = [n.text for n in css(browser, "#run-meta .note")]
    assert any(n.startswith("1 of 6 rollouts were played again after 1 errored attempt, 1 of them an empty reply") for n in notes)
    rows = {row.find_element("css selector", "td.task").text: row.text for row in css(browser, "tr.rollout")}
    assert "replayed ×1" in rows[first["task_id"]] and sum("replayed" in t for t in rows.values()) == 1
    _, detail = open_rollout(browser, first["task_id"])
    assert "replayed after 1 errored attempt(s)" in detail.text and "EmptyModelResponseError" in detail.text
    assert console_errors(browser) == []
