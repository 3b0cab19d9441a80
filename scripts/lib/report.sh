# scripts/lib/report.sh: exporting an executed notebook (sourced by lib.sh): run_all.sh's reports and
# compare.sh's comparison export the same way.

# export_report NOTEBOOK OUT: the executed notebook to HTML and Markdown without code, with
# notebooks/templates (nbconvert's lab and markdown templates, extended to write each figure's alt
# text). Both exports extract the figures into the one folder <stem>_files/ beside them (the same
# names, so each figure is stored once and the HTML links it rather than embedding base64),
# emptied first so that no figure of an earlier export is left behind. The HTML links nbconvert's CSS
# as one stylesheet, $REPORTS_ROOT/assets/report.css (written there by httplab.report.export_html),
# instead of inlining the same 260 KB in every page.
# Both exports in one process (httplab.report.export_html --markdown, which writes what `jupyter
# nbconvert --to markdown --no-input --template alt_markdown` writes): nbconvert is loaded once.
export_report() {
    local nb=$1 out=$2 stem
    stem=$(basename "$nb" .ipynb)
    rm -rf "${out:?}/${stem}_files"
    "$(lab_python)" -m httplab export-html page "$nb" "$out" --reports-root "$REPORTS_ROOT" \
        --templates "$LAB_ROOT/notebooks/templates" --markdown >/dev/null
}
