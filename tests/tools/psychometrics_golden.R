# Golden numbers for tests/test_psychometrics_golden.py, from R psych and eRm.
# Maintainers only: R is not a dependency of gmeter. Run from the repository root:
#   Rscript tests/tools/psychometrics_golden.R
# (psych 2.2.9 and eRm 1.0-2, e.g. Debian's r-cran-psych and r-cran-erm.)
suppressMessages({ library(psych); library(eRm) })
out <- "tests/data/psychometrics"
wide <- function(path, recode_correct = FALSE) {
  d <- read.csv(path, colClasses = c("character", "character", "numeric"))
  w <- reshape(d, idvar = "agent", timevar = "item", direction = "wide")
  x <- as.matrix(w[, -1])
  colnames(x) <- sub("^value[.]", "", colnames(w)[-1])
  if (recode_correct) x <- (x == 1) * 1
  x
}
sets <- list(
  mazes = wide("submissions/mazes/cambridge-psychometrics/responses.csv"),
  letters = wide("submissions/letter-series/humans/responses.csv", recode_correct = TRUE)
)
summary <- c()
for (name in names(sets)) {
  x <- sets[[name]]
  x <- x[, apply(x, 2, sd) > 0]
  tet <- suppressWarnings(tetrachoric(x))
  write.csv(round(tet$rho, 10), file.path(out, paste0(name, "_tetrachoric.csv")))
  f_tet <- suppressWarnings(fa(x, cor = "tet"))
  f_cor <- fa(x)
  lr <- suppressWarnings(LRtest(RM(x)))
  summary <- rbind(summary, data.frame(
    set = name, psych = as.character(packageVersion("psych")),
    erm = as.character(packageVersion("eRm")),
    mean_loading_tetrachoric = mean(f_tet$loadings[, 1]),
    mean_loading_pearson = mean(f_cor$loadings[, 1]),
    variance_tetrachoric = mean(f_tet$loadings[, 1]^2),
    rasch_cml_loglik = RM(x)$loglik,
    andersen_lr = lr$LR, andersen_df = lr$df, andersen_p = lr$pvalue
  ))
  write.csv(data.frame(item = names(f_tet$loadings[, 1]), loading = f_tet$loadings[, 1]),
            file.path(out, paste0(name, "_fa_tetrachoric.csv")), row.names = FALSE)
}
write.csv(summary, file.path(out, "summary.csv"), row.names = FALSE)
