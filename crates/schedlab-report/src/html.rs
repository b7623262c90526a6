//! `report/index.html`: the summary's Markdown as HTML, with the plots, readable offline.

use pulldown_cmark::{Options, Parser, html};

/// A page with the summary (`markdown`, as summary.md has it) and then, per run, its plots
/// (`(run_id, paths relative to index.html)`). Text put into the page by hand is escaped as
/// pulldown-cmark escapes the Markdown's.
pub fn page(title: &str, markdown: &str, plots: &[(String, Vec<String>)]) -> String {
    let mut body = String::new();
    html::push_html(&mut body, Parser::new_ext(markdown, Options::ENABLE_TABLES));
    for (heading, files) in plots {
        body.push_str(&format!("<h2>{}</h2>\n", escape(heading)));
        for file in files {
            // As pulldown-cmark writes a link: percent-encoded, `&` and `'` as entities.
            let mut src = String::new();
            pulldown_cmark_escape::escape_href(&mut src, file).expect("writing to a String");
            body.push_str(&format!(
                "<p><img src=\"{src}\" alt=\"{}\"></p>\n",
                escape(file)
            ));
        }
    }
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>\nbody {{ font-family: sans-serif; margin: 2em; }}\n\
         table {{ border-collapse: collapse; font-size: 90%; }}\n\
         th, td {{ border: 1px solid #ccc; padding: 2px 6px; }}\n\
         img {{ max-width: 100%; }}\n</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
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
    fn tables_become_html_tables_and_plots_follow() {
        let page = page(
            "q: summary",
            "# q\n\n| run | CPU time |\n|---|---:|\n| r1 | 0.368 s |\n",
            &[("r1".into(), vec!["cpu_timeline-r1.svg".into()])],
        );
        assert!(page.contains("<th>run</th>"), "{page}");
        assert!(
            page.contains("<td style=\"text-align: right\">0.368 s</td>"),
            "{page}"
        );
        assert!(
            page.contains("<h2>r1</h2>\n<p><img src=\"cpu_timeline-r1.svg\""),
            "{page}"
        );
    }

    #[test]
    fn text_put_in_by_hand_is_escaped() {
        let page = page(
            "<b>: summary",
            "",
            &[("r<1>".into(), vec!["a&b\"<c>.svg".into()])],
        );
        assert!(page.contains("<title>&lt;b&gt;: summary</title>"), "{page}");
        assert!(
            page.contains(
                "<h2>r&lt;1&gt;</h2>\n<p><img src=\"a&amp;b%22%3Cc%3E.svg\" \
                 alt=\"a&amp;b&quot;&lt;c&gt;.svg\"></p>"
            ),
            "{page}"
        );
    }
}
