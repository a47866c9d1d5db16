// `wsv parse`: parse PTX files, report diagnostics, optionally print them back (--emit) or a
// table of sizes and parse speeds (--stats, the main job until the analyzer exists).
#include "Command.h"

#include "wsv/ptx_parser/Parser.h"
#include "wsv/ptx_parser/Printer.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace wsv;
using llvm::StringRef;

namespace {

const char Usage[] =
    "usage: wsv parse [--emit] [--stats] [--quiet] [--error-limit N] FILE... | -\n"
    "\n"
    "Parses PTX files (\"-\" reads standard input) and reports every syntax error as\n"
    "file:line:column: error: message, with the source line and a caret.\n"
    "\n"
    "options:\n"
    "  --emit           print each module that parsed without errors back as PTX to stdout\n"
    "  --stats          print a table: file, bytes, lines, entries, functions, instructions,\n"
    "                   parse time (ms), speed (MB/s) and errors, one row per file\n"
    "  --quiet          print no diagnostics; the exit code still tells\n"
    "  --error-limit N  stop a file after N errors (default 20; 0 means no limit)\n"
    "\n"
    "exit codes: 0 every file parsed, 2 a file had errors or could not be read, or bad usage\n";

struct Row {
  std::string File;
  ptx::ModuleStats Stats;
  double Milliseconds = 0;
  unsigned Errors = 0;
  bool Unreadable = false;
};

void printStats(llvm::ArrayRef<Row> Rows, llvm::raw_ostream &OS) {
  size_t NameWidth = 4;
  for (const Row &R : Rows)
    NameWidth = std::max(NameWidth, R.File.size());
  auto Line = [&](StringRef File, StringRef Bytes, StringRef Lines, StringRef Entries,
                  StringRef Funcs, StringRef Insts, StringRef Ms, StringRef Speed,
                  StringRef Errors) {
    OS << llvm::left_justify(File, NameWidth) << "  " << llvm::right_justify(Bytes, 11) << "  "
       << llvm::right_justify(Lines, 9) << "  " << llvm::right_justify(Entries, 7) << "  "
       << llvm::right_justify(Funcs, 5) << "  " << llvm::right_justify(Insts, 9) << "  "
       << llvm::right_justify(Ms, 9) << "  " << llvm::right_justify(Speed, 8) << "  "
       << llvm::right_justify(Errors, 6) << '\n';
  };
  auto Num = [](uint64_t N) { return std::to_string(N); };
  auto Fixed = [](double V, int Digits) {
    std::string S;
    llvm::raw_string_ostream(S) << llvm::format(Digits == 1 ? "%.1f" : "%.3f", V);
    return S;
  };
  Line("file", "bytes", "lines", "entries", "funcs", "insts", "parse ms", "MB/s", "errors");
  Row Total;
  Total.File = "total";
  for (const Row &R : Rows) {
    if (R.Unreadable) {
      Line(R.File, "-", "-", "-", "-", "-", "-", "-", "unread");
      ++Total.Errors;
      continue;
    }
    double Speed = R.Milliseconds > 0 ? R.Stats.Bytes / 1e3 / R.Milliseconds : 0;
    Line(R.File, Num(R.Stats.Bytes), Num(R.Stats.Lines), Num(R.Stats.Entries),
         Num(R.Stats.Functions), Num(R.Stats.Instructions), Fixed(R.Milliseconds, 3),
         Fixed(Speed, 1), Num(R.Errors));
    Total.Stats.Bytes += R.Stats.Bytes;
    Total.Stats.Lines += R.Stats.Lines;
    Total.Stats.Entries += R.Stats.Entries;
    Total.Stats.Functions += R.Stats.Functions;
    Total.Stats.Instructions += R.Stats.Instructions;
    Total.Milliseconds += R.Milliseconds;
    Total.Errors += R.Errors;
  }
  if (Rows.size() > 1) {
    double Speed = Total.Milliseconds > 0 ? Total.Stats.Bytes / 1e3 / Total.Milliseconds : 0;
    Line(Total.File, Num(Total.Stats.Bytes), Num(Total.Stats.Lines), Num(Total.Stats.Entries),
         Num(Total.Stats.Functions), Num(Total.Stats.Instructions), Fixed(Total.Milliseconds, 3),
         Fixed(Speed, 1), Num(Total.Errors));
  }
}

int runParse(int Argc, char **Argv) {
  bool Emit = false, Stats = false, Quiet = false;
  ptx::ParseOptions Options;
  llvm::SmallVector<StringRef, 16> Files;
  for (int I = 1; I < Argc; ++I) {
    StringRef Arg = Argv[I];
    if (Arg == "--emit") {
      Emit = true;
    } else if (Arg == "--stats") {
      Stats = true;
    } else if (Arg == "--quiet") {
      Quiet = true;
    } else if (Arg == "--error-limit" || Arg.starts_with("--error-limit=")) {
      StringRef Value = Arg.consume_front("--error-limit=") ? Arg
                        : I + 1 < Argc                       ? StringRef(Argv[++I])
                                                             : StringRef();
      if (Value.getAsInteger(10, Options.ErrorLimit)) {
        llvm::errs() << "wsv parse: error: --error-limit needs a number\n" << Usage;
        return ExitBadInput;
      }
    } else if (Arg.starts_with("-") && Arg != "-") {
      llvm::errs() << "wsv parse: error: unknown option '" << Arg << "'\n" << Usage;
      return ExitBadInput;
    } else {
      Files.push_back(Arg);
    }
  }
  if (Files.empty()) {
    llvm::errs() << "wsv parse: error: no input files\n" << Usage;
    return ExitBadInput;
  }

  int Exit = ExitClean;
  std::vector<Row> Rows;
  for (StringRef Path : Files) {
    Row R;
    R.File = Path == "-" ? "<stdin>" : Path.str();
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> Buffer = ptx::readSourceFile(Path);
    if (!Buffer) {
      llvm::errs() << "wsv parse: error: " << llvm::toString(Buffer.takeError()) << '\n';
      R.Unreadable = true;
      Rows.push_back(std::move(R));
      Exit = ExitBadInput;
      continue;
    }
    ptx::DiagnosticHandler Handler;
    if (Quiet)
      Handler = [](const ptx::Diagnostic &) {};
    auto Start = std::chrono::steady_clock::now();
    ptx::ParseResult Result = ptx::parseBuffer(std::move(*Buffer), Handler, Options);
    auto End = std::chrono::steady_clock::now();
    R.Milliseconds = std::chrono::duration<double, std::milli>(End - Start).count();
    R.Errors = Result.Errors;
    if (!Result.ok())
      Exit = ExitBadInput;
    if (Stats)
      R.Stats = Result.M->stats();
    if (Emit && Result.ok())
      ptx::printModule(*Result.M, llvm::outs());
    Rows.push_back(std::move(R));
  }
  if (Stats)
    printStats(Rows, llvm::outs());
  llvm::outs().flush();
  return Exit;
}

} // namespace

namespace wsv {
extern const Command ParseCommand = {"parse", "parse PTX files and report syntax errors", Usage,
                                     runParse};
} // namespace wsv
