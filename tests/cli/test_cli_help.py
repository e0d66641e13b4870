"""Every option of every command says what it is for in --help, and report --help names its
default formats."""

from __future__ import annotations

import argparse

from gpu_finops.cli import build_parser


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, (*path, name))


def test_every_option_has_help_text():
    missing = [f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}"
               for path, parser in _commands(build_parser()) for action in parser._actions
               if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
               and action.help != argparse.SUPPRESS and not (action.help or "").strip()]
    assert not missing, missing


def test_report_help_states_its_default_formats():
    report = dict(_commands(build_parser()))[("report",)]
    formats = next(a for a in report._actions if "--format" in a.option_strings)
    assert formats.default and str(formats.default) in formats.help % {"default": formats.default}
