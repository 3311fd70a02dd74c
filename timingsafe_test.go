package messaging_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// secretNameRe matches names of values that hold or derive from a secret:
// key hashes, signatures, MACs, tokens, webhook and app secrets, API keys.
var secretNameRe = regexp.MustCompile(`(?i)(hash|secret|signature|^sigs?$|sig$|mac|token|apikey|api_key|password|digest|sum)$`)

// notSecret lists comparisons whose names look secret but whose values
// are not, with the reason, keyed by the two names in source order.
var notSecret = map[string]string{
	"RequestHash hash": "the fingerprint of an idempotent request, compared to tell a replay from a reused key; the caller already holds the API key",
	"ClaimToken Token": "a lease token that only its claimer holds; it authorizes nothing",
	"Token ClaimToken": "a lease token that only its claimer holds; it authorizes nothing",
}

// exprName returns the last name of an identifier, selector, index or call
// expression ("k.Hash" -> "Hash", "sum[:]" -> "sum"), or "".
func exprName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.SliceExpr:
		return exprName(x.X)
	case *ast.IndexExpr:
		return exprName(x.X)
	case *ast.StarExpr:
		return exprName(x.X)
	case *ast.ParenExpr:
		return exprName(x.X)
	case *ast.CallExpr:
		// string(b), []byte(s): the conversion's operand.
		if len(x.Args) == 1 {
			if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "string") {
				return exprName(x.Args[0])
			}
			if _, ok := x.Fun.(*ast.ArrayType); ok {
				return exprName(x.Args[0])
			}
		}
	}
	return ""
}

// trivial reports whether e is nil, a literal or a len/cap call: comparing
// a secret with those leaks nothing about the secret's content.
func trivial(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return true
	case *ast.Ident:
		return x.Name == "nil" || x.Name == "true" || x.Name == "false"
	case *ast.CallExpr:
		if id, ok := x.Fun.(*ast.Ident); ok && (id.Name == "len" || id.Name == "cap") {
			return true
		}
	}
	return false
}

// TestSecretsComparedInConstantTime reads every non-test Go file of the
// module and fails on an ==, != or bytes.Equal / strings.EqualFold /
// bytes.Compare between two values whose names say they hold a secret or
// a digest of one (key hashes, signatures, MACs, tokens, app secrets):
// those must go through crypto/subtle.ConstantTimeCompare or hmac.Equal,
// so that the time an answer takes does not tell how much of a guess was
// right. Comparisons with nil, a literal or a length are fine.
func TestSecretsComparedInConstantTime(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		report := func(n ast.Node, a, b ast.Expr, how string) {
			if trivial(a) || trivial(b) {
				return
			}
			na, nb := exprName(a), exprName(b)
			if _, ok := notSecret[na+" "+nb]; ok {
				return
			}
			if secretNameRe.MatchString(na) || secretNameRe.MatchString(nb) {
				t.Errorf("%s: %s compares %s and %s, not in constant time: use subtle.ConstantTimeCompare or hmac.Equal",
					fset.Position(n.Pos()), how, na, nb)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BinaryExpr:
				if x.Op == token.EQL || x.Op == token.NEQ {
					report(x, x.X, x.Y, x.Op.String())
				}
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok && len(x.Args) == 2 {
					if pkg, ok := sel.X.(*ast.Ident); ok && (pkg.Name == "bytes" || pkg.Name == "strings") &&
						(sel.Sel.Name == "Equal" || sel.Sel.Name == "EqualFold" || sel.Sel.Name == "Compare" || sel.Sel.Name == "HasPrefix") {
						report(x, x.Args[0], x.Args[1], pkg.Name+"."+sel.Sel.Name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 30 {
		t.Fatalf("checked only %d files: is the walk rooted at the module?", checked)
	}
}
