#!/usr/bin/env python3
"""check_c_literals.py FILE.c... — string literals of generated C fit every C compiler.

MSVC limits a string literal to 65,535 bytes after adjacent literals are concatenated, and each
piece to 16,380 characters (errors C2026 / C1091); C11 only promises 4,095. onnx2cl must emit
kernel sources in segments below those limits. Reads C (comments, char literals and escapes
handled), prints the largest concatenated literal and piece per file, exits 1 if any exceeds
the limits. Used by .ci/mingw.sh on a generated model.
"""
import re
import sys

MAX_CONCAT, MAX_PIECE = 65535, 16380
ESC = re.compile(r'\\(?:[0-7]{1,3}|x[0-9a-fA-F]+|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)', re.S)


def literals(src):
    """Yields (line, [piece lengths in bytes]) for each run of adjacent string literals."""
    i, n, line = 0, len(src), 1
    run, run_line = [], 0
    while i < n:
        c = src[i]
        if src.startswith('/*', i):
            j = src.index('*/', i + 2) + 2
        elif src.startswith('//', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
        elif c in ' \t\r\n\f\v':
            j = i + 1
        elif c in '"\'':
            j = i + 1
            while src[j] != c:
                j += 2 if src[j] == '\\' else 1
            j += 1
            if c == '"':
                body = src[i + 1:j - 1]
                if not run:
                    run_line = line
                run.append(len(ESC.sub('x', body)))
        else:
            if run:
                yield run_line, run
                run = []
            j = i + 1
            if c == '#':  # preprocessor line: #include "x.h" is not a string literal
                j = src.find('\n', i)
                j = n if j < 0 else j
        line += src.count('\n', i, j)
        i = j
    if run:
        yield run_line, run


def main():
    bad = 0
    for path in sys.argv[1:]:
        src = open(path, encoding='utf-8', errors='replace').read()
        big_total, big_piece, where, file_bad = 0, 0, 0, 0
        for line, run in literals(src):
            total = sum(run) + 1  # + the terminating NUL
            if total > big_total:
                big_total, where = total, line
            big_piece = max(big_piece, max(run))
            if total > MAX_CONCAT or max(run) > MAX_PIECE:
                print(f'{path}:{line}: string literal of {total} bytes (largest piece {max(run)}'
                      f' chars); limits {MAX_CONCAT} / {MAX_PIECE}')
                file_bad += 1
        bad += file_bad
        print(f'{path}: largest string literal {big_total} bytes (line {where}), largest piece '
              f'{big_piece} chars: {"TOO LARGE" if file_bad else "ok"}')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
