//! `report/index.html`: the summary's Markdown as HTML, with the plots inline, so that the one
//! file is the whole report: it can be mailed or attached to a bug and read offline.

use pulldown_cmark::{Options, Parser, html};

/// A page with the summary (`markdown`, as summary.md has it) and then, per run, its plots
/// (`(run_id, SVG documents)`), each put into the page as it is. The SVGs are plotters' own
/// output, whose text it escapes; text put into the page by hand is escaped as pulldown-cmark
/// escapes the Markdown's. Nothing refers to another file or to the network.
pub fn page(title: &str, markdown: &str, plots: &[(String, Vec<String>)]) -> String {
    let mut body = String::new();
    html::push_html(&mut body, Parser::new_ext(markdown, Options::ENABLE_TABLES));
    for (heading, svgs) in plots {
        body.push_str(&format!("<h2>{}</h2>\n", escape(heading)));
        for svg in svgs {
            body.push_str("<figure>\n");
            body.push_str(svg.trim_end());
            body.push_str("\n</figure>\n");
        }
    }
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>\nbody {{ font-family: sans-serif; margin: 2em; }}\n\
         table {{ border-collapse: collapse; font-size: 90%; }}\n\
         th, td {{ border: 1px solid #ccc; padding: 2px 6px; }}\n\
         figure {{ margin: 1em 0; }}\n\
         figure svg {{ max-width: 100%; height: auto; }}\n</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// `text` for an HTML element or a quoted attribute.
fn escape(text: &str) -> String {
    let mut out = String::new();
    pulldown_cmark_escape::escape_html(&mut out, text).expect("writing to a String");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_become_html_tables_and_plots_are_inline() {
        let svg = "<svg width=\"10\" height=\"10\" viewBox=\"0 0 10 10\" \
                   xmlns=\"http://www.w3.org/2000/svg\">\n<rect x=\"0\"/>\n</svg>\n";
        let page = page(
            "q: summary",
            "# q\n\n| run | CPU time |\n|---|---:|\n| r1 | 0.368 s |\n",
            &[("r1".into(), vec![svg.into()])],
        );
        assert!(page.contains("<th>run</th>"), "{page}");
        assert!(
            page.contains("<td style=\"text-align: right\">0.368 s</td>"),
            "{page}"
        );
        assert!(
            page.contains(&format!(
                "<h2>r1</h2>\n<figure>\n{}\n</figure>",
                svg.trim_end()
            )),
            "{page}"
        );
        assert!(!page.contains("<img"), "{page}");
    }

    #[test]
    fn text_put_in_by_hand_is_escaped() {
        let page = page(
            "<b>: summary",
            "",
            &[("r<1>".into(), vec!["<svg/>".into()])],
        );
        assert!(page.contains("<title>&lt;b&gt;: summary</title>"), "{page}");
        assert!(
            page.contains("<h2>r&lt;1&gt;</h2>\n<figure>\n<svg/>"),
            "{page}"
        );
    }
}
