//===- Report.h - encc report: what each pass buys ------------------------===//
#ifndef ENCC_COMPILER_REPORT_H
#define ENCC_COMPILER_REPORT_H

#include "compiler/driver/Args.h"

namespace encc {

int reportCommand(const Args &args);

} // namespace encc

#endif // ENCC_COMPILER_REPORT_H
