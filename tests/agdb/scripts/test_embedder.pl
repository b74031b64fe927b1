#!/usr/bin/perl
# A deterministic embedding program speaking the command embedder protocol
# (docs/embedders.md), for the tests. Needs perl-base only.
#
#   perl test_embedder.pl --dim N [--count FILE] [--exit-at-start STATUS]
#
# Reads one request {"text":"..."} per line and answers one line each: the
# vector v of N numbers with v[j % N] += byte j of the UTF-8 text (whole
# numbers, so exact in f32; the empty text gives zeros). Texts starting with
# a command misbehave on purpose:
#   !error     answers {"error":"the model refused"}
#   !short     answers N - 1 numbers
#   !garbage   answers a line that is not JSON
#   !infinite  answers a first value too large for an f32 (1e39)
#   !exit      exits with status 3 without answering
#   !slow      sleeps 3 s before answering
#   !object    answers {"embedding":[...]} instead of a bare array
# --count FILE appends one line to FILE when the program starts;
# --exit-at-start STATUS exits at once, reading nothing.
use strict;
use warnings;

my $dim = 0;
my $count_file;
my $exit_at_start;
while (@ARGV) {
    my $flag = shift @ARGV;
    if ($flag eq '--dim') { $dim = shift @ARGV; }
    elsif ($flag eq '--count') { $count_file = shift @ARGV; }
    elsif ($flag eq '--exit-at-start') { $exit_at_start = shift @ARGV; }
    else { die "test_embedder.pl: unknown flag $flag\n"; }
}
die "test_embedder.pl: --dim N is required\n" unless $dim > 0;
exit $exit_at_start if defined $exit_at_start;
if (defined $count_file) {
    open(my $out, '>>', $count_file) or die "test_embedder.pl: $count_file: $!\n";
    print $out "started\n";
    close $out;
}

binmode STDIN;
binmode STDOUT;
$| = 1;

# Decodes the body of a JSON string into UTF-8 bytes.
sub json_unescape {
    my ($s) = @_;
    my %short = ('"' => '"', '\\' => '\\', '/' => '/', b => "\b", f => "\f", n => "\n", r => "\r", t => "\t");
    $s =~ s{\\(?:u([0-9a-fA-F]{4})|(.))}{
        if (defined $1) { my $c = chr(hex $1); utf8::encode($c); $c } else { $short{$2} }
    }ge;
    return $s;
}

sub vector_of {
    my ($text) = @_;
    my @v = (0) x $dim;
    my @bytes = unpack('C*', $text);
    for my $j (0 .. $#bytes) { $v[$j % $dim] += $bytes[$j]; }
    return @v;
}

while (my $line = <STDIN>) {
    chomp $line;
    if ($line !~ /^\{"text":"((?:[^"\\]|\\.)*)"\}$/) {
        print "{\"error\":\"bad request line\"}\n";
        next;
    }
    my $text = json_unescape($1);
    my @v = vector_of($text);
    if ($text =~ /^!error/) { print "{\"error\":\"the model refused\"}\n"; next; }
    if ($text =~ /^!short/) { pop @v; }
    if ($text =~ /^!garbage/) { print "this is not json\n"; next; }
    if ($text =~ /^!infinite/) { $v[0] = '1e39'; }
    if ($text =~ /^!exit/) { exit 3; }
    if ($text =~ /^!slow/) { select(undef, undef, undef, 3); }
    my $array = '[' . join(',', @v) . ']';
    if ($text =~ /^!object/) { print "{\"embedding\":$array}\n"; next; }
    print "$array\n";
}
