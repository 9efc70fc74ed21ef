/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where perun collect puts a profile: -o checked before anything runs, a
 * default name never taken twice, and a rescue file when the place asked
 * for cannot be written at the end.  */
#ifndef PERUN_OUTPUT_H
#define PERUN_OUTPUT_H

/* Checks -o FILE before the target runs: FILE is not a directory (nor
 * names one with a trailing '/'), its directory exists and can be written.
 * -1 with a message saying the fix.  */
int output_check(const char *path);
/* Reserves a hidden, empty staging file beside final (O_EXCL|O_NOFOLLOW)
 * for the writer to fill; caller frees; NULL with a message.  */
char *output_stage(const char *final);
/* output_stage, and the staging file stays open for writing on *fd_out.  */
char *output_stage_fd(const char *final, int *fd_out);
/* output_publish for a staging file written on fd: the new name is linked to
 * the open file itself, and staged removed only while it still names it, so
 * a swap in a directory others can write is neither published nor deleted.  */
char *output_publish_fd(int fd, const char *staged, const char *final);
/* Removes staged when it still names the file open on fd.  */
void output_discard(int fd, const char *staged);
/* Gives the filled staging file a name that no file has: final, else final
 * with -2, -3, ... before its .perf; never replaces a file.  Returns the
 * name used (caller frees); NULL with a message, staged left in place.  */
char *output_publish(const char *staged, const char *final);
/* Creates an empty rescue file for a profile that could not be written to
 * wanted: NAME-rescue-XXXXXX.perf in jobs_dir (when not NULL), else the
 * current directory, else $TMPDIR or /tmp; O_EXCL|O_NOFOLLOW.  Caller
 * frees; NULL with a message when none of them can be written.  */
char *output_rescue(const char *jobs_dir, const char *wanted);
/* Where a profile made from the profile label goes by default (perun
 * postprocessby): .perun/jobs/NAME-SUFFIX.perf beside the pending profiles,
 * NAME label's base name with ':' and '@' made '-' and a final .perf
 * dropped; the jobs directory must be trusted.  Caller frees; NULL when
 * there is no repository (quietly, *no_repo set) or the jobs directory is
 * refused (reported).  */
char *output_pending_path(const char *label, const char *suffix, int *no_repo);

#endif
