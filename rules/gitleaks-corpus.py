#!/usr/bin/env python3
"""Regenerate tests/fixtures/gitleaks-corpus.json from a gitleaks checkout.

    python3 rules/gitleaks-corpus.py GITLEAKS_DIR [OUT_DIR]

GITLEAKS_DIR is a gitleaks work tree (or `git archive` of one) at the
version rules/gitleaks.json comes from (v8.30.1). OUT_DIR defaults to
tests/fixtures of this repository; the script writes gitleaks-corpus.json
and gitleaks-corpus.LICENSE (gitleaks' MIT licence) there.

Gitleaks tests each rule in its generator, cmd/generate/config/rules/*.go:
a list of true positives (tps) the rule must find and false positives
(fps) it must not. Those lists are Go code (literals, concatenations,
sample wrappers, random secrets drawn from a regex), so this script
evaluates the small part of Go they use, with a seeded random generator
in place of gitleaks' reggen, so the corpus is the same on every run.

For each true positive it records the secret gitleaks reports
(Finding.Secret: the rule's secret group, or the first non-empty group,
or the match), found by running the rule from config/gitleaks.toml (the
secret passed to gitleaks' sample wrapper when the rule cannot be run
here), widened to the token it is part of as the redaction widens what
it removes. For each false positive it records whether any gitleaks rule
flags it (the keyword prefilter, the regex, entropy, the global and rule
allowlists, as detect.go does without decoding): `cargo test` checks
the redaction against the true positives and the false positives no
gitleaks rule flags.

Needs Python 3.11 or later (tomllib), nothing else. Not run by cargo.
"""

import base64
import json
import math
import os
import random
import re
import sys
import tomllib
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import re._parser as sre_parse  # Python 3.11+
        import re._constants as sre_constants
    except ImportError:  # pragma: no cover
        import sre_parse
        import sre_constants


# ---------------------------------------------------------------- Go tokens

class Tok:
    __slots__ = ("kind", "val")

    def __init__(self, kind, val):
        self.kind, self.val = kind, val

    def __repr__(self):
        return f"{self.kind}:{self.val!r}"


OPS = sorted(
    """... := += -= == != <= >= && || <- ++ -- + - * / % & | ^ < > = ! ( ) [ ] { } , ; . :""".split(),
    key=len,
    reverse=True,
)
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'",
           "a": "\a", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def unquote(body):
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n == "x":
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif n == "u":
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif n == "U":
            out.append(chr(int(body[i + 2:i + 10], 16)))
            i += 10
        elif n in "01234567" and i + 3 < len(body) and body[i + 2] in "01234567":
            out.append(chr(int(body[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(ESCAPES[n])
            i += 2
    return "".join(out)


def tokenize(src):
    toks, i, n = [], 0, len(src)

    def semi():
        if toks and (toks[-1].kind in ("id", "str", "int", "char")
                     or toks[-1].val in (")", "]", "}", "++", "--")):
            toks.append(Tok("op", ";"))

    while i < n:
        c = src[i]
        if c == "\n":
            semi()
            i += 1
        elif c in " \t\r":
            i += 1
        elif src.startswith("//", i):
            i = src.find("\n", i)
            i = n if i < 0 else i
        elif src.startswith("/*", i):
            j = src.index("*/", i)
            if "\n" in src[i:j]:
                semi()
            i = j + 2
        elif c == "`":
            j = src.index("`", i + 1)
            toks.append(Tok("str", src[i + 1:j].replace("\r", "")))
            i = j + 1
        elif c in "\"'":  # an interpreted string or a rune: up to the same quote, escapes skipped
            j = i + 1
            while src[j] != c:
                j += 2 if src[j] == "\\" else 1
            toks.append(Tok("str" if c == '"' else "char", unquote(src[i + 1:j])))
            i = j + 1
        elif c.isdigit():
            m = re.match(r"0[xX][0-9a-fA-F_]+|[0-9_]+(?:\.[0-9]+)?", src[i:])
            toks.append(Tok("int", m.group(0)))
            i += len(m.group(0))
        elif c.isalpha() or c == "_":
            m = re.match(r"\w+", src[i:])
            toks.append(Tok("id", m.group(0)))
            i += len(m.group(0))
        else:
            for op in OPS:
                if src.startswith(op, i):
                    toks.append(Tok("op", op))
                    i += len(op)
                    break
            else:
                raise SyntaxError(f"unexpected {c!r}")
    semi()
    return toks


# ---------------------------------------------------------------- Go syntax

def number(text):
    text = text.replace("_", "")
    return float(text) if "." in text else int(text, 0)


class Parser:
    """A recursive-descent parser for the part of Go the rule generators use."""

    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self, k=0):
        j = self.i + k
        return self.t[j] if j < len(self.t) else Tok("eof", None)

    def next(self):
        tok = self.peek()
        self.i += 1
        return tok

    def at(self, val):
        return self.peek().val == val and self.peek().kind in ("op", "id")

    def eat(self, val):
        if not self.at(val):
            raise SyntaxError(f"expected {val!r}, found {self.peek()!r}")
        return self.next()

    def skip_semis(self):
        while self.at(";"):
            self.next()

    def skip_balanced(self):
        """Skip one balanced (...), [...] or {...}."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        close = pairs[self.next().val]
        depth = 1
        while depth:
            tok = self.next()
            if tok.kind == "op" and tok.val in pairs:
                depth += 1
            elif tok.kind == "op" and tok.val in pairs.values():
                depth -= 1
        return close

    # -------- file level
    def file(self):
        funcs, globals_ = {}, []
        while self.peek().kind != "eof":
            tok = self.peek()
            if tok.val == "package":
                self.next(), self.next()
            elif tok.val == "import":
                self.next()
                if self.at("("):
                    self.skip_balanced()
                else:
                    self.next()
            elif tok.val == "func":
                self.next()
                if self.at("("):  # a method: skip its receiver
                    self.skip_balanced()
                name = self.next().val
                params = self.params()
                while not self.at("{"):  # result types
                    if self.at("(") or self.at("["):
                        self.skip_balanced()
                    else:
                        self.next()
                start = self.i
                try:
                    funcs[name] = (params, self.block())
                except SyntaxError:  # not needed unless called: fails then
                    self.i = start
                    self.skip_balanced()
                    funcs[name] = (params, [("unparsed", name)])
            elif tok.val in ("var", "const"):
                globals_.extend(self.var_decl())
            elif tok.val == "type":
                self.next(), self.next()
                while not self.at(";"):
                    if self.at("{") or self.at("("):
                        self.skip_balanced()
                    else:
                        self.next()
            else:
                self.next()
        return funcs, globals_

    def params(self):
        self.eat("(")
        names = []
        while not self.at(")"):
            names.append(self.next().val)
            while not (self.at(",") or self.at(")")):
                if self.at("[") or self.at("("):
                    self.skip_balanced()
                else:
                    self.next()
            if self.at(","):
                self.next()
        self.eat(")")
        return names

    def skip_type(self):
        while not (self.at("=") or self.at(";") or self.at(")")):
            if self.at("[") or self.at("{"):
                self.skip_balanced()
            else:
                self.next()

    def var_decl(self):
        self.next()  # var / const

        def spec():
            names = [self.next().val]
            while self.at(","):
                self.next()
                names.append(self.next().val)
            if not self.at("="):
                self.skip_type()
            value = None
            if self.at("="):
                self.next()
                value = self.expr()
            return ("var", names, value)

        if self.at("("):
            self.next()
            return self.until(")", spec)
        return [spec()]

    def until(self, close, item):
        """What `item()` reads of each element up to `close` (eaten), with
        the semicolons around the elements skipped."""
        items = []
        self.skip_semis()
        while not self.at(close):
            items.append(item())
            self.skip_semis()
        self.eat(close)
        return items

    # -------- statements
    def block(self):
        self.eat("{")
        return self.until("}", self.stmt)

    def stmt(self):
        tok = self.peek()
        if tok.kind == "id" and tok.val in ("var", "const"):
            return ("block", self.var_decl())
        if tok.kind == "id" and tok.val == "return":
            self.next()
            return ("return", None if self.at(";") or self.at("}") else self.expr())
        if tok.kind == "id" and tok.val in ("continue", "break"):
            self.next()
            return (tok.val,)
        if tok.kind == "id" and tok.val == "if":
            self.next()
            cond = self.expr(no_lit=True)
            body = self.block()
            other = []
            if self.at("else"):
                self.next()
                other = [self.stmt()] if self.at("if") else self.block()
            return ("if", cond, body, other)
        if tok.kind == "id" and tok.val == "for":
            self.next()
            if self.at("{"):
                return ("loop", self.block())
            names = []
            while not self.at(":="):
                names.append(self.next().val)
                if self.at(","):
                    self.next()
            self.eat(":=")
            self.eat("range")
            seq = self.expr(no_lit=True)
            return ("range", names, seq, self.block())
        lhs = [self.expr()]
        while self.at(","):
            self.next()
            lhs.append(self.expr())
        if self.at(":=") or self.at("="):
            self.next()
            rhs = self.expr()
            return ("assign", lhs, rhs)
        if self.at("++") or self.at("--"):
            self.next()
            return ("expr", lhs[0])
        return ("expr", lhs[0])

    # -------- expressions
    def expr(self, no_lit=False):
        left = self.unary(no_lit)
        while self.peek().kind == "op" and self.peek().val in (
                "+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">=", "&&", "||"):
            op = self.next().val
            left = ("bin", op, left, self.unary(no_lit))
        return left

    def unary(self, no_lit):
        if self.peek().kind == "op" and self.peek().val in ("&", "!", "-", "*"):
            op = self.next().val
            return ("unary", op, self.unary(no_lit))
        return self.primary(no_lit)

    def type_lit(self):
        """A type written as an operand: []T, map[K]V, []*T."""
        start = self.i
        if self.at("["):
            self.next()
            self.eat("]")
            self.type_lit()
        elif self.at("map"):
            self.next()
            self.skip_balanced()
            self.type_lit()
        elif self.at("*"):
            self.next()
            self.type_lit()
        else:
            self.next()
            while self.at("."):
                self.next(), self.next()
        return ("type", " ".join(str(t.val) for t in self.t[start:self.i]))

    def primary(self, no_lit):
        tok = self.peek()
        if tok.kind in ("str", "int", "char"):
            self.next()
            node = ("lit", tok.val if tok.kind != "int" else number(tok.val))
        elif tok.val == "(":
            self.next()
            node = self.expr()
            self.eat(")")
        elif tok.val in ("[", "map"):
            node = self.type_lit()
        elif tok.val == "{":
            node = ("complit", None, self.complit())
            return node
        elif tok.kind == "id":
            self.next()
            node = ("name", tok.val)
        else:
            raise SyntaxError(f"unexpected {tok!r}")
        while True:
            if self.at("."):
                self.next()
                node = ("attr", node, self.next().val)
            elif self.at("("):
                self.next()
                args, spread = [], False
                while not self.at(")"):
                    args.append(self.expr())
                    if self.at("..."):
                        self.next()
                        spread = True
                    if self.at(","):
                        self.next()
                    self.skip_semis()
                self.eat(")")
                node = ("call", node, args, spread)
            elif self.at("["):
                self.next()
                index = self.expr()
                if self.at(":"):
                    self.next()
                    hi = None if self.at("]") else self.expr()
                    self.eat("]")
                    node = ("slice", node, index, hi)
                else:
                    self.eat("]")
                    node = ("index", node, index)
            elif self.at("{") and (node[0] == "type" or (not no_lit and node[0] in ("name", "attr"))):
                node = ("complit", node, self.complit())
            else:
                return node

    def complit(self):
        self.eat("{")
        return self.until("}", self.element)

    def element(self):
        """One element of a composite literal: (key or None, value)."""
        value = ("complit", None, self.complit()) if self.at("{") else self.expr()
        key = None
        if self.at(":"):
            self.next()
            self.skip_semis()
            key = value
            value = ("complit", None, self.complit()) if self.at("{") else self.expr()
        if self.at(","):
            self.next()
        return (key, value)


# ---------------------------------------------------------------- evaluation

class Sample(str):
    """A true positive built by a sample wrapper: the secret it wraps is known."""
    secret = None


def sample(text, secret):
    s = Sample(text)
    s.secret = str(secret)
    return s


class Opaque:
    """A value this evaluator does not need (a rule, a compiled regex)."""

    def __init__(self, what, fields=None):
        self.what, self.fields = what, fields or {}

    def __repr__(self):
        return f"<{self.what}>"


class Return(Exception):
    def __init__(self, value):
        self.value = value


class Continue(Exception):
    pass


class Break(Exception):
    pass


def sample_templates(utils_src):
    """gitleaks' GenerateSampleSecrets templates, read from its source."""
    body = utils_src[utils_src.index("func GenerateSampleSecrets"):]
    toks = tokenize(body[:body.index("replacer :=")])
    return [toks[k + 2].val for k in range(len(toks) - 2)
            if toks[k].kind == "str" and toks[k + 1].val == ":" and toks[k + 2].kind == "str"]


def go_sprintf(fmt, args):
    args = list(args)

    def one(m):
        verb = m.group(0)
        if verb == "%%":
            return "%"
        v = args.pop(0)
        if verb.endswith("q"):
            return json.dumps(str(v))
        return str(v)

    return re.sub(r"%[-+# 0]*\d*(?:\.\d+)?[sdvqx%]", one, fmt)


B64 = {
    "StdEncoding": lambda b: base64.b64encode(b).decode(),
    "RawStdEncoding": lambda b: base64.b64encode(b).decode().rstrip("="),
    "URLEncoding": lambda b: base64.urlsafe_b64encode(b).decode(),
    "RawURLEncoding": lambda b: base64.urlsafe_b64encode(b).decode().rstrip("="),
}


class Interp:
    def __init__(self, funcs, globals_, templates):
        self.funcs = funcs
        self.templates = templates
        self.globals = {}
        self.global_specs = {n: v for (_, names, v) in globals_ for n in names}
        self.rng = random.Random(0)

    def reseed(self, seed):
        self.rng = random.Random(seed)

    # -------- builtins
    def new_secret(self, regex):
        return generate(regex, self.rng)

    def plausible_secret(self, regex):
        stop = self.global_value("DefaultStopWords")
        for _ in range(10000):
            s = self.new_secret(regex)
            if re.search(r"[1-9]", s) and not any(w in s.lower() for w in stop):
                return s
        raise RuntimeError("no plausible secret")

    def call_attr(self, path, args):
        name = ".".join(path)
        utils_patterns = {
            "utils.Numeric": "[0-9]{%s}", "utils.Hex": "[a-f0-9]{%s}",
            "utils.AlphaNumeric": "[a-z0-9]{%s}", "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
            "utils.AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
            "utils.AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}",
        }
        if name in utils_patterns:
            return utils_patterns[name] % args[0]
        if name == "utils.Hex8_4_4_4_12":
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if name == "secrets.NewSecret":
            return self.new_secret(args[0])
        if name == "utils.GenerateSampleSecrets":
            ident, secret = args
            return [sample(t.replace("{i}", ident).replace("{I}", ident.upper()).replace("{s}", secret), secret)
                    for t in self.templates]
        if name == "utils.GenerateSampleSecret":
            return sample(f'{args[0]}_api_token = "{args[1]}"', args[1])
        if name in ("utils.Validate", "utils.ValidateWithPaths"):
            return ("validate", args[0], args[1], args[2])
        if name == "fmt.Sprintf":
            return go_sprintf(args[0], args[1:])
        if name == "strings.Repeat":
            return args[0] * args[1]
        if name == "strings.ToUpper":
            return args[0].upper()
        if name == "strings.ToLower":
            return args[0].lower()
        if name == "strings.Join":
            return args[1].join(args[0])
        if name == "strings.ReplaceAll":
            return args[0].replace(args[1], args[2])
        if len(path) == 3 and path[0] in ("b64", "base64") and path[2] == "EncodeToString":
            data = args[0] if isinstance(args[0], bytes) else str(args[0]).encode()
            return B64[path[1]](data)
        if name == "regexp.MustCompile" or name.startswith("utils.Generate") or name == "utils.MergeRegexps":
            return Opaque("regex")
        raise NotImplementedError(name)

    # -------- evaluation
    def global_value(self, name):
        if name not in self.globals:
            self.globals[name] = self.eval(self.global_specs[name], {})
        return self.globals[name]

    def lookup(self, name, env):
        if name in env:
            return env[name]
        if name in self.global_specs:
            return self.global_value(name)
        if name in ("nil",):
            return None
        if name in ("true", "false"):
            return name == "true"
        raise NameError(name)

    def path_of(self, node):
        if node[0] == "name":
            return [node[1]]
        if node[0] == "attr":
            inner = self.path_of(node[1])
            return inner + [node[2]] if inner is not None else None
        return None

    def call(self, node, env):
        _, fn, arg_nodes, spread = node
        args = [self.eval(a, env) for a in arg_nodes]
        if fn[0] == "type":  # a conversion: []byte(x), string(x)
            return args[0]
        path = self.path_of(fn)
        if path and len(path) == 1:
            name = path[0]
            if name == "append":
                base = list(args[0] or [])
                more = args[1:]
                if spread:
                    more = more[:-1] + list(more[-1] or [])
                return base + more
            if name == "len":
                return len(args[0])
            if name in ("string",):
                return args[0]
            if name == "newPlausibleSecret":
                return self.plausible_secret(args[0])
            if name in self.funcs:
                params, body = self.funcs[name]
                return self.run(body, dict(zip(params, args)))
            raise NameError(name)
        if path and path[0] not in env:
            return self.call_attr(path, args)
        raise NotImplementedError(str(fn))

    def eval(self, node, env):
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "name":
            return self.lookup(node[1], env)
        if kind == "bin":
            a, b = self.eval(node[2], env), self.eval(node[3], env)
            ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "==": lambda: a == b,
                   "!=": lambda: a != b, "<": lambda: a < b, ">": lambda: a > b, "<=": lambda: a <= b,
                   ">=": lambda: a >= b, "&&": lambda: a and b, "||": lambda: a or b}
            return ops[node[1]]()
        if kind == "unary":
            v = self.eval(node[2], env)
            return (not v) if node[1] == "!" else (-v if node[1] == "-" else v)
        if kind == "call":
            return self.call(node, env)
        if kind == "attr":
            base = self.eval(node[1], env)
            if isinstance(base, Opaque):
                return base.fields.get(node[2])
            raise NotImplementedError(str(node))
        if kind == "index":
            return self.eval(node[1], env)[self.eval(node[2], env)]
        if kind == "complit":
            typ = node[1][1] if node[1] and node[1][0] == "type" else None
            elems = node[2]
            if typ and typ.startswith("map"):
                return {self.eval(k, env): self.eval(v, env) for k, v in elems}
            if (typ and typ.startswith("[")) or (typ is None and all(k is None for k, _ in elems)):
                return [self.eval(v, env) for _, v in elems]
            fields = {}
            for k, v in elems:
                if k is not None and k[0] == "name":
                    try:
                        fields[k[1]] = self.eval(v, env)
                    except (NotImplementedError, NameError, KeyError, TypeError):
                        fields[k[1]] = Opaque("field")
            return Opaque("struct", fields)
        if kind == "type":
            return Opaque("type")
        raise NotImplementedError(kind)

    def assign(self, target, value, env, define):
        if target[0] == "name":
            if target[1] != "_":
                env[target[1]] = value
        # assignments to fields (r.X = …) do not change the cases

    def run(self, stmts, env):
        try:
            self.exec_block(stmts, env)
        except Return as r:
            return r.value
        return None

    def exec_block(self, stmts, env):
        for s in stmts:
            self.exec(s, env)

    def exec(self, s, env):
        kind = s[0]
        if kind == "block":
            for (_, names, value) in s[1]:
                v = self.eval(value, env) if value is not None else []
                for n in names:
                    env[n] = v
        elif kind == "assign":
            _, lhs, rhs = s
            value = self.eval(rhs, env)
            if len(lhs) == 1:
                self.assign(lhs[0], value, env, True)
            else:
                for t, v in zip(lhs, value):
                    self.assign(t, v, env, True)
        elif kind == "expr":
            self.eval(s[1], env)
        elif kind == "return":
            raise Return(None if s[1] is None else self.eval(s[1], env))
        elif kind == "if":
            self.exec_block(s[2] if self.eval(s[1], env) else s[3], env)
        elif kind == "range":
            _, names, seq_node, body = s
            seq = self.eval(seq_node, env)
            items = seq.items() if isinstance(seq, dict) else enumerate(seq)
            for k, v in items:
                if names and names[0] != "_":
                    env[names[0]] = k
                if len(names) > 1 and names[1] != "_":
                    env[names[1]] = v
                try:
                    self.exec_block(body, env)
                except Continue:
                    continue
                except Break:
                    break
        elif kind == "continue":
            raise Continue()
        elif kind == "break":
            raise Break()
        elif kind == "loop":
            raise NotImplementedError("for {}")
        else:
            raise NotImplementedError(kind)


# ---------------------------------------------------------------- reggen

PRINTABLE = [chr(c) for c in range(0x20, 0x7F)]
CATEGORIES = {
    "CATEGORY_DIGIT": "0123456789",
    "CATEGORY_WORD": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    "CATEGORY_SPACE": " \t\n",
}


def class_chars(items, rng):
    allowed, negate = set(), False
    for op, av in items:
        op = str(op)
        if op == "NEGATE":
            negate = True
        elif op == "LITERAL":
            allowed.add(chr(av))
        elif op == "RANGE":
            allowed.update(chr(c) for c in range(av[0], av[1] + 1))
        elif op == "CATEGORY":
            allowed.update(CATEGORIES.get(str(av), ""))
    if negate:
        return [c for c in PRINTABLE if c not in allowed]
    return sorted(allowed)


def gen_nodes(nodes, rng, out, icase):
    for op, av in nodes:
        op = str(op)
        if op == "LITERAL":
            out.append(chr(av))
        elif op == "NOT_LITERAL":
            out.append(rng.choice([c for c in PRINTABLE if c != chr(av)]))
        elif op == "IN":
            out.append(rng.choice(class_chars(av, rng)))
        elif op == "ANY":
            out.append(rng.choice(PRINTABLE))
        elif op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            if hi == sre_constants.MAXREPEAT:
                hi = lo + 1 if lo > 0 else 1  # reggen's Generate(1): one more at most
            for _ in range(rng.randint(lo, hi)):
                gen_nodes(sub, rng, out, icase)
        elif op == "SUBPATTERN":
            gen_nodes(av[-1], rng, out, icase)
        elif op == "BRANCH":
            gen_nodes(rng.choice(av[1]), rng, out, icase)
        elif op in ("AT", "GROUPREF", "ASSERT", "ASSERT_NOT"):
            pass
        else:
            raise NotImplementedError(f"reggen: {op}")


def generate(regex, rng):
    """A random string matching `regex`, drawn as gitleaks' reggen does."""
    parsed = sre_parse.parse(re2_to_python(regex), re.ASCII)
    out = []
    gen_nodes(list(parsed), rng, out, False)
    return "".join(out)


# ---------------------------------------------------------------- RE2 → Python re

POSIX = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "lower": "a-z", "upper": "A-Z",
         "space": " \\t\\n\\r\\f\\v", "xdigit": "0-9a-fA-F", "word": "a-zA-Z0-9_", "punct": "!-/:-@\\[-`{-~"}


def re2_to_python(p):
    """An RE2 pattern as Python's `re` reads it: `\\z`, POSIX classes, and
    inline flags in the middle of a pattern (scoped to the end of their group)."""
    out, i, stack, in_class = [], 0, [0], False
    while i < len(p):
        c = p[i]
        if c == "\\":
            nxt = p[i + 1]
            out.append("\\Z" if nxt == "z" and not in_class else p[i:i + 2])
            i += 2
            continue
        if in_class:
            m = re.match(r"\[:(\^?)(\w+):\]", p[i:])
            if m:
                out.append(POSIX[m.group(2)])
                i += len(m.group(0))
                continue
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if p[i:i + 1] == "^":
                out.append("^")
                i += 1
            if p[i:i + 1] == "]":
                out.append("\\]")
                i += 1
            continue
        if c == "(":
            m = re.match(r"\(\?([a-zA-Z-]+)\)", p[i:])
            if m:
                if i == 0:
                    out.append(m.group(0))
                else:
                    out.append(f"(?{m.group(1)}:")
                    stack[-1] += 1
                i += len(m.group(0))
                continue
            stack.append(0)
            out.append(c)
            i += 1
            continue
        if c == ")":
            out.append(")" * stack.pop())
            out.append(c)
            i += 1
            continue
        if c == "|" and stack[-1]:
            out.append(")" * stack[-1])
            stack[-1] = 0
            out.append(c)
            i += 1
            continue
        out.append(c)
        i += 1
    out.append(")" * stack.pop())
    return "".join(out)


def compile_re2(p):
    return re.compile(re2_to_python(p), re.ASCII)


# ---------------------------------------------------------------- gitleaks, as detect.go runs it

def entropy(s):
    if not s:
        return 0.0
    counts = {}
    for c in s:
        counts[c] = counts.get(c, 0) + 1
    n = len(s)
    return -sum(v / n * math.log2(v / n) for v in counts.values())


class Allowlist:
    def __init__(self, spec):
        self.target = spec.get("regexTarget", "secret")
        self.cond = spec.get("condition", "OR").upper()
        self.regexes = [compile_re2(r) for r in spec.get("regexes", [])]
        self.stopwords = [w.lower() for w in spec.get("stopwords", [])]
        self.paths = spec.get("paths", [])
        self.commits = spec.get("commits", [])

    def allows(self, secret, match, line):
        target = {"match": match, "line": line}.get(self.target, secret)
        by_regex = any(r.search(target) for r in self.regexes)
        by_word = any(w in secret.lower() for w in self.stopwords)
        if self.cond == "AND":
            checks = []
            if self.commits:
                checks.append(False)
            if self.paths:
                checks.append(False)  # a brief has no path
            if self.regexes:
                checks.append(by_regex)
            if self.stopwords:
                checks.append(by_word)
            return bool(checks) and all(checks)
        return by_regex or by_word


class GitleaksRule:
    def __init__(self, spec):
        self.id = spec["id"]
        self.regex = compile_re2(spec["regex"]) if "regex" in spec else None
        self.path = "path" in spec
        self.group = spec.get("secretGroup", 0)
        self.entropy = spec.get("entropy", 0.0)
        self.keywords = [k.lower() for k in spec.get("keywords", [])]
        self.allow = [Allowlist(a) for a in spec.get("allowlists", [])]

    def findings(self, text, global_allow, ignore_path=False):
        """The secrets this rule reports in `text` (a fragment without a path)."""
        if self.regex is None or (self.path and not ignore_path):
            return []
        lower = text.lower()
        if self.keywords and not any(k in lower for k in self.keywords):
            return []
        found = []
        for m in self.regex.finditer(text):
            match = text[m.start():m.end()].strip("\n")
            start = m.start()
            end = start + len(match)
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            line = text[line_start:len(text) if line_end < 0 else line_end]
            if "gitleaks:allow" in line:
                continue
            secret, at = match, start
            g = self.regex.search(match)
            if g and g.re.groups >= 1:
                if self.group > 0:
                    secret, at = g.group(self.group) or "", start + max(g.start(self.group), 0)
                else:
                    for i, s in enumerate(g.groups(), 1):
                        if s:
                            secret, at = s, start + g.start(i)
                            break
            if self.entropy and entropy(secret) <= self.entropy:
                continue
            if any(a.allows(secret, match, line) for a in global_allow + self.allow):
                continue
            found.append((secret, at, start, end))
        return found


def load_gitleaks(config_path):
    with open(config_path, "rb") as f:
        cfg = tomllib.load(f)
    global_allow = [Allowlist(cfg["allowlist"])] if "allowlist" in cfg else []
    global_allow += [Allowlist(a) for a in cfg.get("allowlists", [])]
    rules = {}
    for spec in cfg["rules"]:
        rules[spec["id"]] = GitleaksRule(spec)
    return rules, global_allow


WORD = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
JOINERS = set("-+/.~%")


def widen(text, start, end, match_start, match_end):
    """`text[start:end]` widened to the token it is part of, as
    src/brief/redact.rs widens what it removes: word characters, and the
    joiners `-+/.~%` between word characters where the match took them or
    the secret holds them; `=` padding on the right."""
    held = set(text[start:end])

    def joins(at):
        return text[at] in JOINERS and (match_start <= at < match_end or text[at] in held)

    while start > 0 and (text[start - 1] in WORD or (start >= 2 and joins(start - 1) and text[start - 2] in WORD)):
        start -= 1
    while end < len(text) and (text[end] in WORD or (end + 1 < len(text) and joins(end) and text[end + 1] in WORD)):
        end += 1
    while end < len(text) and text[end] == "=":
        end += 1
    return text[start:end]


# ---------------------------------------------------------------- main

def dump(corpus):
    """The corpus as JSON, one case a line (diffs stay readable)."""
    lines = ["{"]
    for key, value in corpus.items():
        if isinstance(value, list):
            items = ",\n".join("  " + json.dumps(v, ensure_ascii=False) for v in value)
            lines.append(f" {json.dumps(key)}: [\n{items}\n ],")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    lines[-1] = lines[-1].rstrip(",")
    return "\n".join(lines) + "\n}\n"


def rule_functions(main_src):
    return re.findall(r"^\s*rules\.(\w+)\(\)", main_src, re.M)


def main():
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    src = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[2] if len(sys.argv) == 3 else os.path.join(here, "..", "tests", "fixtures")
    gen = os.path.join(src, "cmd", "generate", "config")
    with open(os.path.join(gen, "utils", "generate.go")) as f:
        templates = sample_templates(f.read())
    funcs, globals_ = {}, []
    rules_dir = os.path.join(gen, "rules")
    for name in sorted(os.listdir(rules_dir)):
        if name.endswith(".go") and not name.endswith("_test.go"):
            with open(os.path.join(rules_dir, name)) as f:
                fs, gs = Parser(tokenize(f.read())).file()
            funcs.update(fs)
            globals_.extend(gs)
    with open(os.path.join(gen, "main.go")) as f:
        order = rule_functions(f.read())
    rules, global_allow = load_gitleaks(os.path.join(src, "config", "gitleaks.toml"))
    with open(os.path.join(src, "LICENSE")) as f:
        licence = f.read()

    interp = Interp(funcs, globals_, templates)
    tps, fps, problems, fallback = [], [], [], 0
    for fn in order:
        interp.reseed(f"gitleaks-corpus/{fn}")
        try:
            result = interp.run(funcs[fn][1], {})
        except Exception as e:  # noqa: BLE001 - report and go on
            problems.append(f"{fn}: {type(e).__name__}: {e}")
            continue
        if not (isinstance(result, tuple) and result[0] == "validate"):
            problems.append(f"{fn}: no test cases")
            continue
        _, rule, tp_list, fp_list = result
        paths = isinstance(tp_list, dict)
        rule_id = rule.fields["RuleID"]
        if isinstance(tp_list, dict):
            tp_list = list(tp_list.values())
        if isinstance(fp_list, dict):
            fp_list = list(fp_list.values())
        gl = rules.get(rule_id)
        if gl is None or gl.regex is None:
            problems.append(f"{rule_id}: not a content rule of gitleaks.toml, left out")
            continue
        for text in tp_list or []:
            found = gl.findings(text, global_allow, ignore_path=True)
            secrets = [widen(text, at, at + len(s), m0, m1) for s, at, m0, m1 in found if s]
            if not secrets and getattr(text, "secret", None):
                fallback += 1
                at = text.find(text.secret)
                secrets = [text.secret if at < 0 else widen(text, at, at + len(text.secret), at, at)]
            if not secrets:
                problems.append(f"{rule_id}: true positive without a secret here: {text[:60]!r}")
                continue
            tps.append({"rule": rule_id, "text": str(text),
                        "secrets": sorted(set(secrets))})
        for text in fp_list or []:
            flagged = sorted(r.id for r in rules.values() if r.findings(str(text), global_allow))
            if paths and gl.findings(str(text), global_allow, ignore_path=True):
                # A case that differs from a true positive by its file
                # name only: git-handoff runs this rule on content alone.
                flagged.append(f"{rule_id} (path ignored)")
            fps.append({"rule": rule_id, "text": str(text), "gitleaks": flagged})

    corpus = {
        "source": "gitleaks v8.30.1, cmd/generate/config/rules/*.go: each rule's true and false "
                  "positives, evaluated by rules/gitleaks-corpus.py (random secrets seeded)",
        "license": "MIT, Copyright (c) 2019 Zachary Rice; see gitleaks-corpus.LICENSE",
        "true_positives": tps,
        "false_positives": fps,
    }
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "gitleaks-corpus.json"), "w") as f:
        f.write(dump(corpus))
    with open(os.path.join(out_dir, "gitleaks-corpus.LICENSE"), "w") as f:
        f.write(licence)
    clean = sum(1 for fp in fps if not fp["gitleaks"])
    print(f"{len(tps)} true positives, {len(fps)} false positives ({clean} flagged by no gitleaks rule)",
          file=sys.stderr)
    if fallback:
        print(f"{fallback} true positives not matched here: their sample's secret is used", file=sys.stderr)
    for p in problems:
        print(f"warning: {p}", file=sys.stderr)


if __name__ == "__main__":
    main()
