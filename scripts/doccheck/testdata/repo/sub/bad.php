<?php
// R1 is fine, R98 is not
$x = "an API.md string"; # and R97 here
/**
 * A docblock citing R96
 */
$y = 'R95 in a string is code';
