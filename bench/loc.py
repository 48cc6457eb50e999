"""Count lines of code in memsearch/ the way issue 31 does: lines holding a token
other than a comment, a newline, indentation or a docstring.

    python bench/loc.py            # total, then per module
"""
import ast
import sys
import tokenize
from pathlib import Path

SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
        tokenize.ENDMARKER, tokenize.ENCODING}


def docstring_lines(source):
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def code_lines(path):
    source = path.read_text(encoding="utf-8")
    docs = docstring_lines(source)
    lines = set()
    with path.open("rb") as f:
        for tok in tokenize.tokenize(f.readline):
            if tok.type in SKIP or (tok.type == tokenize.STRING and tok.start[0] in docs):
                continue
            lines.update(range(tok.start[0], tok.end[0] + 1))
    return len(lines)


def main(root="memsearch"):
    counts = {p: code_lines(p) for p in sorted(Path(root).glob("*.py"))}
    total = sum(counts.values())
    allines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in counts)
    print(f"code {total}  all {allines}")
    for p, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"{n:6} {len(p.read_text(encoding='utf-8').splitlines()):6} {p.name}")


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` is no error
    main(*sys.argv[1:])
