//! The `{{ … }}` substitutions of kerchunk's reference files (version 1), the subset of
//! jinja2 that kerchunk and the reference-file specification use: a name (a template, or a
//! variable of a `gen` entry), or integer arithmetic on variables (`{{ (i + 1) * 1000 }}`:
//! `+`, `-`, `*`, `//` and `%` as in Python, parentheses, integer literals). Anything else
//! (filters, calls, `{% … %}` statements, whitespace control as in `{{- x -}}`) is refused
//! with an error, never rendered wrong.

use super::shown::shown;
use std::collections::HashMap;

/// The longest expression between `{{` and `}}`.
const MAX_EXPRESSION_CHARS: usize = 1000;

/// The deepest nesting of parentheses and signs in an expression.
const MAX_NESTING: usize = 64;

/// What names stand for while rendering: templates (text) and the variables of one `gen`
/// item (integers).
pub struct Scope<'a> {
    /// The templates of the reference file, by name.
    pub templates: &'a HashMap<String, String>,
    /// The variables of a `gen` item and their values.
    pub variables: &'a [(&'a str, i64)],
}

/// `text` with each `{{ expression }}` replaced by its value, or a message saying what is
/// wrong; the result is refused once longer than `max_len` bytes.
pub fn render(text: &str, scope: &Scope<'_>, max_len: usize) -> Result<String, String> {
    if text.contains("{%") || text.contains("{#") {
        return Err("jinja statements and comments ({% %}, {# #}) are not supported".into());
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| "a '{{' has no closing '}}'".to_string())?;
        let inside = &after[..end];
        if inside.starts_with(['-', '+']) || inside.ends_with(['-', '+']) {
            return Err(
                "jinja whitespace control ({{- -}}, {{+ +}}) is not supported: put a space \
                 after '{{' and before '}}'"
                    .into(),
            );
        }
        let expression = inside.trim();
        if expression.len() > MAX_EXPRESSION_CHARS {
            return Err(format!(
                "an expression is longer than {MAX_EXPRESSION_CHARS} characters"
            ));
        }
        match scope.templates.get(expression) {
            Some(value) if !scope.variables.iter().any(|(n, _)| *n == expression) => {
                out.push_str(value)
            }
            _ => out.push_str(&evaluate(expression, scope.variables)?.to_string()),
        }
        if out.len() > max_len {
            return Err(format!("it renders longer than {max_len} bytes"));
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    if out.len() > max_len {
        return Err(format!("it renders longer than {max_len} bytes"));
    }
    Ok(out)
}

/// The integer value of `expression` with `variables`.
fn evaluate(expression: &str, variables: &[(&str, i64)]) -> Result<i128, String> {
    let tokens = tokens(expression)?;
    let mut parser = Parser {
        tokens: &tokens,
        at: 0,
        variables,
        depth: 0,
    };
    let value = parser.sum()?;
    if parser.at != tokens.len() {
        return Err(format!(
            "{} is not a supported expression",
            shown(expression)
        ));
    }
    Ok(value)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Token<'a> {
    Number(i128),
    Name(&'a str),
    Plus,
    Minus,
    Times,
    FloorDivide,
    Modulo,
    Open,
    Close,
}

fn tokens(expression: &str) -> Result<Vec<Token<'_>>, String> {
    let bytes = expression.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        i += 1;
        out.push(match c {
            b' ' | b'\t' => continue,
            b'+' => Token::Plus,
            b'-' => Token::Minus,
            b'*' if bytes.get(i) == Some(&b'*') => {
                return Err("'**' is not supported".into());
            }
            b'*' => Token::Times,
            b'/' if bytes.get(i) == Some(&b'/') => {
                i += 1;
                Token::FloorDivide
            }
            b'/' => return Err("'/' gives a fraction: use '//'".into()),
            b'%' => Token::Modulo,
            b'(' => Token::Open,
            b')' => Token::Close,
            b'0'..=b'9' => {
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                let digits = &expression[start..i];
                Token::Number(
                    digits
                        .parse()
                        .map_err(|_| format!("the number {digits} is too large"))?,
                )
            }
            c if c == b'_' || c.is_ascii_alphabetic() => {
                while i < bytes.len() && (bytes[i] == b'_' || bytes[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                Token::Name(&expression[start..i])
            }
            _ => {
                let char: String = expression[start..].chars().take(1).collect();
                return Err(format!(
                    "{char:?} in {} is not supported",
                    shown(expression)
                ));
            }
        });
    }
    Ok(out)
}

struct Parser<'a, 'v> {
    tokens: &'a [Token<'a>],
    at: usize,
    variables: &'v [(&'v str, i64)],
    depth: usize,
}

impl Parser<'_, '_> {
    fn next_is(&mut self, token: Token<'_>) -> bool {
        let found = self.tokens.get(self.at) == Some(&token);
        if found {
            self.at += 1;
        }
        found
    }

    /// Terms joined by `+` and `-`.
    fn sum(&mut self) -> Result<i128, String> {
        let mut value = self.product()?;
        loop {
            value = if self.next_is(Token::Plus) {
                value.checked_add(self.product()?)
            } else if self.next_is(Token::Minus) {
                value.checked_sub(self.product()?)
            } else {
                return Ok(value);
            }
            .ok_or("the arithmetic overflows")?;
        }
    }

    /// Factors joined by `*`, `//` and `%` (floor division and modulo as in Python).
    fn product(&mut self) -> Result<i128, String> {
        let mut value = self.factor()?;
        loop {
            if self.next_is(Token::Times) {
                value = value
                    .checked_mul(self.factor()?)
                    .ok_or("the arithmetic overflows")?;
                continue;
            }
            let divide = if self.next_is(Token::FloorDivide) {
                true
            } else if self.next_is(Token::Modulo) {
                false
            } else {
                return Ok(value);
            };
            let divisor = self.factor()?;
            if divisor == 0 {
                return Err("division by zero".into());
            }
            let quotient = value
                .checked_div(divisor)
                .ok_or("the arithmetic overflows")?;
            let remainder = value - quotient * divisor;
            let floor = remainder != 0 && (remainder < 0) != (divisor < 0);
            value = match (divide, floor) {
                (true, true) => quotient - 1,
                (true, false) => quotient,
                (false, true) => remainder + divisor,
                (false, false) => remainder,
            };
        }
    }

    /// A number, a variable, a signed factor or a parenthesised sum.
    fn factor(&mut self) -> Result<i128, String> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!("the expression nests deeper than {MAX_NESTING}"));
        }
        let token = self.tokens.get(self.at).copied();
        self.at += 1;
        let value = match token {
            Some(Token::Number(n)) => n,
            Some(Token::Name(name)) => self
                .variables
                .iter()
                .find(|(n, _)| *n == name)
                .map(|&(_, v)| i128::from(v))
                .ok_or_else(|| format!("{} is neither a template nor a variable", shown(name)))?,
            Some(Token::Minus) => self
                .factor()?
                .checked_neg()
                .ok_or("the arithmetic overflows")?,
            Some(Token::Plus) => self.factor()?,
            Some(Token::Open) => {
                let value = self.sum()?;
                if !self.next_is(Token::Close) {
                    return Err("a '(' has no closing ')'".into());
                }
                value
            }
            _ => return Err("an expression is incomplete".into()),
        };
        self.depth -= 1;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render_with(text: &str, variables: &[(&str, i64)]) -> Result<String, String> {
        let templates = HashMap::from([("u".to_string(), "server/path".to_string())]);
        render(
            text,
            &Scope {
                templates: &templates,
                variables,
            },
            100,
        )
    }

    #[test]
    fn names_and_arithmetic_render() {
        assert_eq!(
            render_with("http://{{u}}_{{ i }}", &[("i", 3)]).unwrap(),
            "http://server/path_3"
        );
        assert_eq!(
            render_with("{{(i + 1) * 1000}}", &[("i", 4)]).unwrap(),
            "5000"
        );
        assert_eq!(
            render_with("{{ -7 // 2 }},{{ -7 % 2 }},{{ 7 % -2 }}", &[]).unwrap(),
            "-4,1,-1"
        );
        assert_eq!(
            render_with("{{i*j-1}}", &[("i", 2), ("j", 5)]).unwrap(),
            "9"
        );
        assert_eq!(render_with("plain", &[]).unwrap(), "plain");
        // A variable of the same name as a template wins.
        assert_eq!(render_with("{{u}}", &[("u", 1)]).unwrap(), "1");
    }

    #[test]
    fn what_is_not_supported_is_refused() {
        for bad in [
            "{{ i / 2 }}",
            "{{ i ** 2 }}",
            "{{ f(c='x') }}",
            "{{ missing }}",
            "{{ i",
            "{% for x in y %}",
            "{{ (i }}",
            "{{ 1 // 0 }}",
            "{{ 99999999999999999999999999999999999999999 }}",
            "{{ 9223372036854775807 * 9223372036854775807 * 9223372036854775807 }}",
            "{{ i + }}",
            "{{ (0 - 170141183460469231731687303715884105727 - 1) // -1 }}",
        ] {
            assert!(render_with(bad, &[("i", 1)]).is_err(), "{bad}");
        }
        // Whitespace control would otherwise read as a sign: `{{- i }}` is not `-1`.
        for bad in [
            "{{- i }}",
            "{{+ i }}",
            "{{ i -}}",
            "{{ i +}}",
            "a {{-i-}} b",
        ] {
            let err = render_with(bad, &[("i", 1)]).unwrap_err();
            assert!(err.contains("whitespace control"), "{bad}: {err}");
        }
        assert_eq!(render_with("{{ -i }}", &[("i", 1)]).unwrap(), "-1");
        let deep = format!("{{{{{}1{}}}}}", "(".repeat(100), ")".repeat(100));
        assert!(render_with(&deep, &[]).unwrap_err().contains("nests"));
        assert!(render_with(&"{{u}}".repeat(20), &[])
            .unwrap_err()
            .contains("longer"));
    }
}
